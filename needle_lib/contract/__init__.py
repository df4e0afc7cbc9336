"""The contract every benchmark shares: what a case's outcome is, and when two runs match.

``outcome`` decides a case's verdict from its score, once, for the live run, rescore,
merge and resume; ``setup`` says which fields two runs must share for their cases to be
interchangeable; ``records`` types what crosses module boundaries (case records, dumps,
reports); ``schema`` is the schema of the result files and their one reader each (decode,
migrate, validate).
"""
