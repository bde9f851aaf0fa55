"""Studying: reading plans, the tracker, marking progress, new documents, questions."""
