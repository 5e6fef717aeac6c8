-- How well the tutorial's clusters (activepower.predict.class) match the days' true
-- patterns (activepower.pattern, see data.py): sqlml's measurement, not SQLFlow's text.
-- doc/tutorial/apsara2019/activepower_clustering/README.md reports no figure (its data has
-- no true pattern), so the bars show that the clustering found the three patterns.

-- How many days of each true pattern each cluster holds.
SELECT p.class AS cluster, t.pattern AS pattern, COUNT(*) AS days
FROM activepower.predict p JOIN activepower.pattern t ON p.dates = t.dates
GROUP BY p.class, t.pattern
ORDER BY p.class, t.pattern;

-- Purity: the share of days whose cluster's most common pattern is their own.
-- expect: SELECT SUM(most) * 1.0 / (SELECT COUNT(*) FROM activepower.train) FROM (SELECT MAX(days) AS most FROM (SELECT p.class AS cluster, t.pattern AS pattern, COUNT(*) AS days FROM activepower.predict p JOIN activepower.pattern t ON p.dates = t.dates GROUP BY p.class, t.pattern) c GROUP BY cluster) m >= 0.9   -- no figure in SQLFlow's doc: clusters hold one pattern each
-- Inverse purity: the share of days in their pattern's most common cluster.
-- expect: SELECT SUM(most) * 1.0 / (SELECT COUNT(*) FROM activepower.train) FROM (SELECT MAX(days) AS most FROM (SELECT p.class AS cluster, t.pattern AS pattern, COUNT(*) AS days FROM activepower.predict p JOIN activepower.pattern t ON p.dates = t.dates GROUP BY p.class, t.pattern) c GROUP BY pattern) m >= 0.9   -- no figure in SQLFlow's doc: each pattern kept in one cluster
