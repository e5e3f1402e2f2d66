"""mechverify's verifier: properties, engines, the counterexample store, reports and the CLI
(``python -m verifier --help``)."""
