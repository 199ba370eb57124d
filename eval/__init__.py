"""Evaluation harness: question sets, retrieval metrics and paired statistics."""
