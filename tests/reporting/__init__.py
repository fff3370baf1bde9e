"""Tests of the reports: CSV, HTML in a real browser, compare, gate and Markdown."""
