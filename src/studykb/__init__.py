"""studykb: a cross-referenced knowledge base of study notes on AI infrastructure."""

__version__ = "0.1.0"
