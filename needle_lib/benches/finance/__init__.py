"""finance: known-item answers from public registries (Wikidata, SEC XBRL, SEC filings).

``fields`` says what each gold field is (type, freshness, query templates, cue words);
``sources``/``generate`` build gold rows; ``match`` decides whether a result carries the
gold; the shared known-item harness does the rest.
"""
