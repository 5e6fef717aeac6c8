-- Standard SQL: passed to the database as written.
CREATE TABLE houses AS SELECT 1 AS id, 120.0 AS area, 3 AS rooms, 250000.0 AS price;
SELECT id, price FROM houses WHERE area > 100;
