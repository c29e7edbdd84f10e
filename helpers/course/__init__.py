"""Layer 2: the course's corpora, benchmarks and trained models (imports ``infra`` and ``lib``)."""
