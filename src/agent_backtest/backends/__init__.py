"""Where traces live and where results go: the services abt reads traces from and writes
verdicts to.

An OTLP/HTTP receiver that writes what exporters send as the collector's file form, clients of
the Phoenix and Langfuse REST APIs that pull traces into files the readers take, and the push of
a scored run's verdicts back onto the production spans they judge. Nothing here is imported by
the replay path: each module is loaded by the command that uses it.
"""

DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""The largest request body the OTLP receiver accepts, before and after gzip: here, apart from
the receiver and its HTTP server, as ``abt collect --help`` shows it."""
