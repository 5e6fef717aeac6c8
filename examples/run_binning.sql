-- TO RUN: a program of your own on the rows of a SELECT, as SQLFlow's fraud-analysis tutorial
-- bins the credit-card data with its binning runnable. The rows reach the program as Parquet,
-- what it writes replaces the INTO tables (all of them or none).
-- Run with: sqlml run examples/run_binning.sql   (paths below resolve next to this file)

CREATE OR REPLACE TABLE iris AS SELECT * FROM read_csv('iris.csv');

-- A script (run_binning.py beside this file) with SQLFlow's CMD arguments: four equal-width
-- bins of two columns, and each column's summary.
SELECT * FROM iris
TO RUN run_binning.py
CMD "--columns=sepal_length,petal_length",
    "--bin_num=4"
WITH run.timeout = 60
INTO iris_binning, iris_column_stats;

SELECT column_name, bin, low, high, rows, share FROM iris_binning ORDER BY column_name, bin;
SELECT * FROM iris_column_stats ORDER BY column_name;

-- A Python function (module.function, imported from this folder in the child process only):
-- the rows and the WITH values in, the tables out.
SELECT class FROM iris
TO RUN run_binning.shares
WITH column = 'class', digits = 2
INTO iris_shares;

SELECT * FROM iris_shares ORDER BY class;

ASSERT (SELECT SUM(rows) FROM iris_binning WHERE column_name = 'petal_length') = 150
MESSAGE 'every flower falls in one bin';
