"""legal: known-item cases and regulations (CourtListener opinions, eCFR sections).

``sources`` reads CourtListener and the eCFR; ``caption`` and ``code_query`` turn a case or a
section into a query (and check it); ``generate`` builds gold rows; ``match`` decides
whether a result carries the gold ids; the shared known-item harness does the rest.
"""
