"""Workflow optimize, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('optimize')

s1_maximize_woodcarving_plan = workflow.add(steps.statement(
    ir.OptimizeStatement(
        id='s1-maximize-woodcarving-plan',
        text='SELECT * FROM woodcarving\nTO MAXIMIZE SUM((price - materials_cost - other_cost) * amount)\nCONSTRAINT SUM(finishing * amount) <= 100,\n           SUM(carpentry * amount) <= 80,\n           amount <= max_num\nWITH variables = "amount(product)", var_type = "NonNegativeIntegers"\nINTO woodcarving_plan',
        line=1,
        column=1,
        select='SELECT * FROM woodcarving',
        direction='maximize',
        objective={'expr': ['sum', ['*', ['-', ['-', ['column', 'price', 2, 18], ['column', 'materials_cost', 2, 26]], ['column', 'other_cost', 2, 43]], ['variable', 2, 57]], 2, 13], 'text': 'SUM((price - materials_cost - other_cost) * amount)'},
        constraints=[{'left': ['sum', ['*', ['column', 'finishing', 3, 16], ['variable', 3, 28]], 3, 12], 'op': '<=', 'right': ['number', 100], 'group_by': None, 'text': 'SUM(finishing * amount) <= 100', 'line': 3, 'column': 36}, {'left': ['sum', ['*', ['column', 'carpentry', 4, 16], ['variable', 4, 28]], 4, 12], 'op': '<=', 'right': ['number', 80], 'group_by': None, 'text': 'SUM(carpentry * amount) <= 80', 'line': 4, 'column': 36}, {'left': ['variable', 5, 12], 'op': '<=', 'right': ['column', 'max_num', 5, 22], 'group_by': None, 'text': 'amount <= max_num', 'line': 5, 'column': 19}],
        variable='amount',
        index=['product'],
        var_type='NonNegativeIntegers',
        solver='highs',
        table=['woodcarving_plan'],
        attributes={'output.replace': False},
    )
))
s2_minimize_shipment_plan = workflow.add(steps.statement(
    ir.OptimizeStatement(
        id='s2-minimize-shipment-plan',
        text='SELECT * FROM routes\nTO MINIMIZE SUM(shipment * distance)\nCONSTRAINT SUM(shipment) <= capacity GROUP BY plants,\n           SUM(shipment) >= demand GROUP BY markets\nWITH variables = "shipment(plants, markets)", var_type = "NonNegativeReals",\n     solver.time_limit = 60\nUSING highs\nINTO shipment_plan',
        line=8,
        column=1,
        select='SELECT * FROM routes',
        direction='minimize',
        objective={'expr': ['sum', ['*', ['variable', 9, 17], ['column', 'distance', 9, 28]], 9, 13], 'text': 'SUM(shipment * distance)'},
        constraints=[{'left': ['sum', ['variable', 10, 16], 10, 12], 'op': '<=', 'right': ['column', 'capacity', 10, 29], 'group_by': 'plants', 'text': 'SUM(shipment) <= capacity GROUP BY plants', 'line': 10, 'column': 26}, {'left': ['sum', ['variable', 11, 16], 11, 12], 'op': '>=', 'right': ['column', 'demand', 11, 29], 'group_by': 'markets', 'text': 'SUM(shipment) >= demand GROUP BY markets', 'line': 11, 'column': 26}],
        variable='shipment',
        index=['plants', 'markets'],
        var_type='NonNegativeReals',
        solver='highs',
        table=['shipment_plan'],
        attributes={'output.replace': False, 'solver.time_limit': 60.0},
    )
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
