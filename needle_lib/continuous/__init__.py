"""Continuous search benchmarking: when each bench runs, and the history its runs leave.

``schedule`` says which benches a trigger runs (the GitHub workflow and a self-hosted cron
ask it the same way); ``runs`` turns one run report into history rows; ``store`` keeps those
rows in a plain directory (``needle publish``); ``ci`` puts confidence intervals on the
last seven days. The search dashboard pages read that directory.
"""
