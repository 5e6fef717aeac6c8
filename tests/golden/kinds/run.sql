SELECT * FROM transactions
TO RUN analysis.binning
WITH bins = 10, columns = ["amount", "age"], run.timeout = 600
INTO transaction_bins;
SELECT * FROM transactions
TO RUN scripts/summary.py CMD "--by=day", "--top=5"
INTO daily_summary, top_days;
SELECT * FROM creditcard
TO RUN sqlflow/runnable:v0.0.1
CMD "two_dim_binning.py", "--columns=v1,v2", "--bin_num=10,5"
INTO creditcard_stats, creditcard_prob;
SELECT * FROM top_days;
