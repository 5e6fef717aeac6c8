SELECT * FROM woodcarving
TO MAXIMIZE SUM((price - materials_cost - other_cost) * amount)
CONSTRAINT SUM(finishing * amount) <= 100,
           SUM(carpentry * amount) <= 80,
           amount <= max_num
WITH variables = "amount(product)", var_type = "NonNegativeIntegers"
INTO woodcarving_plan;
SELECT * FROM routes
TO MINIMIZE SUM(shipment * distance)
CONSTRAINT SUM(shipment) <= capacity GROUP BY plants,
           SUM(shipment) >= demand GROUP BY markets
WITH variables = "shipment(plants, markets)", var_type = "NonNegativeReals",
     solver.time_limit = 60
USING highs
INTO shipment_plan;
