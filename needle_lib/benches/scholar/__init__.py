"""scholar: known-item paper retrieval (arXiv and Europe PMC), four query buckets per paper.

``papers`` says what a paper is (ids, domain, age); ``sources`` and ``bodies`` fetch and
read the listings and full texts; ``buckets`` writes and checks the title/body/clue/tot
queries; ``generate`` builds gold rows; ``match`` finds a paper's ids in a search result;
the shared known-item harness does the rest.
"""
