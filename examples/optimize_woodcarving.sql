-- SQLFlow's woodcarving example (doc/tutorial/optimization_guide.md): how many wooden soldiers
-- and trains to make each week for the most profit, given 100 finishing hours, 80 carpentry
-- hours and at most 40 soldiers sold. Run: sqlml run examples/optimize_woodcarving.sql

DROP TABLE IF EXISTS woodcarving;
CREATE TABLE woodcarving (
    product VARCHAR(255),
    price FLOAT,
    materials_cost FLOAT,
    other_cost FLOAT,
    finishing FLOAT,
    carpentry FLOAT,
    max_num FLOAT
);
INSERT INTO woodcarving VALUES
    ('soldier', 27, 10, 14, 2, 1, 40),
    ('train', 21, 9, 10, 1, 1, 10000);

-- One amount per product: the profit summed over the rows is maximised under the two
-- labour sums and each row's own limit.
SELECT * FROM woodcarving
TO MAXIMIZE SUM((price - materials_cost - other_cost) * amount)
CONSTRAINT SUM(finishing * amount) <= 100,
           SUM(carpentry * amount) <= 80,
           amount <= max_num
WITH variables = "amount(product)",
     var_type = "NonNegativeIntegers"
INTO woodcarving_plan;

SELECT product, amount FROM woodcarving_plan ORDER BY product;

-- The documented optimum: 20 soldiers and 60 trains, a profit of 180.
ASSERT (SELECT SUM((price - materials_cost - other_cost) * amount) FROM woodcarving_plan) = 180
MESSAGE 'the woodcarving plan is not the documented optimum';
