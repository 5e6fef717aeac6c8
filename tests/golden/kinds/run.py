"""Workflow run, compiled by sqlml 0.1.0.

Run it with: python THIS_FILE.py [--datasource URL] [--backend local|argo] [--jobs N]
"""

from sqlml.interrupted import loading

with loading():  # Ctrl-C meanwhile: one line and status 130, no traceback
    from sqlml import ir, steps
    from sqlml.workflow import Workflow
    from sqlml.workflow_cli import main

workflow = Workflow('run')

s1_run_analysis_binning = workflow.add(steps.statement(
    ir.RunStatement(
        id='s1-run-analysis-binning',
        text='SELECT * FROM transactions\nTO RUN analysis.binning\nWITH bins = 10, columns = ["amount", "age"], run.timeout = 600\nINTO transaction_bins',
        line=1,
        column=1,
        select='SELECT * FROM transactions',
        program='analysis.binning',
        program_kind='function',
        command=[],
        params={'bins': 10, 'columns': ['amount', 'age']},
        tables=[['transaction_bins']],
        attributes={'run.timeout': 600.0, 'run.datasource': False, 'output.replace': False},
        image=None,
        entrypoint=None,
    )
))
s2_run_scripts_summary_py = workflow.add(steps.statement(
    ir.RunStatement(
        id='s2-run-scripts-summary-py',
        text='SELECT * FROM transactions\nTO RUN scripts/summary.py CMD "--by=day", "--top=5"\nINTO daily_summary, top_days',
        line=5,
        column=1,
        select='SELECT * FROM transactions',
        program='scripts/summary.py',
        program_kind='script',
        command=['--by=day', '--top=5'],
        params={},
        tables=[['daily_summary'], ['top_days']],
        attributes={'run.timeout': 3600.0, 'run.datasource': False, 'output.replace': False},
        image=None,
        entrypoint=None,
    )
))
s3_run_sqlflow_runnable_v0_0_1 = workflow.add(steps.statement(
    ir.RunStatement(
        id='s3-run-sqlflow-runnable-v0-0-1',
        text='SELECT * FROM creditcard\nTO RUN sqlflow/runnable:v0.0.1\nCMD "two_dim_binning.py", "--columns=v1,v2", "--bin_num=10,5"\nINTO creditcard_stats, creditcard_prob',
        line=8,
        column=1,
        select='SELECT * FROM creditcard',
        program='sqlflow/runnable:v0.0.1',
        program_kind='image',
        command=['two_dim_binning.py', '--columns=v1,v2', '--bin_num=10,5'],
        params={},
        tables=[['creditcard_stats'], ['creditcard_prob']],
        attributes={'run.timeout': 3600.0, 'run.datasource': False, 'output.replace': False},
        image='sqlflow/runnable:v0.0.1',
        entrypoint=None,
    )
))
s4_select = workflow.add(steps.sql(
    ir.SqlStatement(
        id='s4-select',
        text='SELECT * FROM top_days',
        line=12,
        column=1,
        params={},
    ),
    after=[s2_run_scripts_summary_py],
))

if __name__ == "__main__":
    raise SystemExit(main(workflow, base_dir='.'))
