"""What the ``telemetry`` extra adds that reaches outside the process: the OTLP trace exporter (`otlp`).

The one place in the distribution that imports ``undercroft_net`` (the policed transport); importing a module
here without the extra raises `undercroft_obs.telemetry.otlp.TelemetryMissing`.
"""

__all__: list[str] = []
