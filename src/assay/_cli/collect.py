"""``assay collect`` and ``assay import``: OTLP in, the spans table out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay._cli import _common as o
from assay._cli._progress import described, working
from assay.errors import ConfigError

_PARAMETER_OF_FIELD = {
    "roll_age_s": "roll_age",
    "idle_flush_s": "idle_flush",
    "roll_bytes": "roll_mb",
    "max_body_bytes": "max_body_mb",
    "max_decompressed_bytes": "max_decompressed_mb",
    "max_queue_bytes": "max_queue_mb",
    "header_timeout_s": "header_timeout",
    "body_timeout_s": "body_timeout",
    "log_file_bytes": "log_file_mb",
    "compact_fanout": "fanout",
}
"""The ``CollectorConfig`` fields set by a flag of another name (units: seconds, MB)."""


def collect(
    out: o.Out = Path("traces"),
    host: Annotated[
        str, typer.Option(help="Interface to bind (0.0.0.0 exposes it to the network).")
    ] = "127.0.0.1",
    http_port: Annotated[
        int, typer.Option(help="OTLP/HTTP port (0: any free port, -1: disabled).")
    ] = 4318,
    grpc_port: Annotated[
        int, typer.Option(help="OTLP/gRPC port (0: any free port, -1: disabled).")
    ] = 4317,
    token: Annotated[
        str | None,
        typer.Option(envvar="ASSAY_COLLECT_TOKEN", help="Bearer token senders must present."),
    ] = None,
    tls_cert: Annotated[
        Path | None,
        typer.Option(help="Serve HTTP and gRPC over TLS with this certificate chain (PEM)."),
    ] = None,
    tls_key: Annotated[
        Path | None, typer.Option(help="The private key (PEM) of --tls-cert.")
    ] = None,
    tls_client_ca: Annotated[
        Path | None,
        typer.Option(help="Require client certificates signed by these CAs (PEM; mutual TLS)."),
    ] = None,
    wal_dir: Annotated[
        Path | None, typer.Option(help="Write-ahead log folder (default: OUT/_wal).")
    ] = None,
    roll_age: Annotated[
        float, typer.Option(help="Seconds after which a Parquet file is rolled.")
    ] = 60.0,
    roll_mb: Annotated[int, typer.Option(help="Roll a Parquet file after this many MB.")] = 128,
    idle_flush: Annotated[
        float,
        typer.Option(help="Seconds without new spans before they are written (0: at the roll)."),
    ] = 0.5,
    max_body_mb: Annotated[int, typer.Option(help="Largest request body accepted.")] = 16,
    max_decompressed_mb: o.MaxDecompressedMb = 64,
    max_queue_mb: Annotated[
        int, typer.Option(help="Request MB waiting to be converted before pushing back.")
    ] = 128,
    max_connections: Annotated[
        int, typer.Option(help="Concurrent HTTP connections; more are answered 503.")
    ] = 512,
    max_gzip_members: Annotated[
        int, typer.Option(help="Concatenated gzip members per request; more get 400.")
    ] = 16,
    header_timeout: Annotated[
        float,
        typer.Option(help="Seconds a connection may take to send a request's headers."),
    ] = 20.0,
    body_timeout: Annotated[
        float, typer.Option(help="Seconds a request may take to send its body.")
    ] = 60.0,
    fsync: Annotated[
        bool, typer.Option(help="fsync the write-ahead log before acknowledging.")
    ] = True,
    workers: Annotated[
        int | None,
        typer.Option(help="Decoding processes (default: one per core, at most 4; 0: none)."),
    ] = None,
    log_file: Annotated[
        Path | None,
        typer.Option(help="Log to this file (rotated within --log-file-mb) instead of stderr."),
    ] = None,
    log_file_mb: Annotated[
        int, typer.Option(help="Most MB the log file and its one rotated copy hold.")
    ] = 10,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log every request, repeats included.")
    ] = False,
    buckets: o.Buckets = None,
    compact: Annotated[
        bool,
        typer.Option(help="Merge each partition's small files as they are committed (--fanout)."),
    ] = True,
    fanout: o.Fanout = o.FANOUT,
) -> None:
    """Receive OTLP (HTTP and gRPC) and write the spans table; SIGTERM drains and stops."""
    from assay.collect import CollectorConfig, run_collector

    if compact and fanout < 2:
        raise ConfigError(f"--fanout must be at least 2 (got {fanout}; --no-compact: never merge)")
    mb = 1024 * 1024
    with o.flags_named(_PARAMETER_OF_FIELD):
        config = CollectorConfig(
            out=out,
            host=host,
            http_port=None if http_port < 0 else http_port,
            grpc_port=None if grpc_port < 0 else grpc_port,
            token=token,
            tls_cert=tls_cert,
            tls_key=tls_key,
            tls_client_ca=tls_client_ca,
            wal_dir=wal_dir,
            roll_age_s=roll_age,
            idle_flush_s=idle_flush,
            roll_bytes=roll_mb * mb,
            max_body_bytes=max_body_mb * mb,
            max_decompressed_bytes=max_decompressed_mb * mb,
            max_queue_bytes=max_queue_mb * mb,
            max_connections=max_connections,
            max_gzip_members=max_gzip_members,
            header_timeout_s=header_timeout,
            body_timeout_s=body_timeout,
            fsync=fsync,
            workers=workers,
            buckets=buckets,
            compact_fanout=fanout if compact else None,
            log_file=log_file,
            log_file_bytes=log_file_mb * mb,
            verbose=verbose,
        )
    run_collector(config)


def import_(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Trace files or folders: OTLP (JSON lines or protobuf), Jaeger JSON, Tempo "
            "query results, Zipkin v2 JSON, MLflow 3 traces, Phoenix datasets, Langfuse exports "
            "(told by content)."
        ),
    ],
    out: o.Out,
    max_decompressed_mb: o.MaxDecompressedMb = 1024,
    max_message_mb: Annotated[
        int, typer.Option(help="Most MB in one JSON line or protobuf message (held in memory).")
    ] = 64,
    buckets: o.Buckets = None,
    quiet: o.Quiet = False,
) -> None:
    """Import trace files (OTLP, Jaeger, Tempo, Zipkin, MLflow, Phoenix, Langfuse) into Parquet.

    All or nothing: the output folder changes only once every input was read and written.
    """
    from assay.ingest import ImportInterrupted, ImportLimits, import_files

    mb = 1024 * 1024
    try:
        with working(f"importing {described(paths)} into {out}", quiet=quiet):
            result = import_files(
                paths,
                out,
                limits=ImportLimits(max_decompressed_mb * mb, max_message_mb * mb),
                buckets=buckets,
            )
    except ImportInterrupted as exc:
        typer.echo(
            f"assay: import interrupted ({exc.signal_name}): nothing was imported, {out} is as "
            "it was",
            err=True,
        )
        raise SystemExit(130) from None
    rejected = f", {result.rejected} rejected (invalid IDs)" if result.rejected else ""
    typer.echo(
        f"imported {result.spans} spans from {result.files_read} file(s) into "
        f"{len(result.written)} Parquet file(s) in {out}{rejected}"
    )
    for source, spans in result.formats:  # what each format cannot tell: said, not filled in
        said = [f"mapped {'; '.join(source.mapped)}"] if source.mapped else []
        said += (
            [f"it does not record {'; '.join(source.cannot_tell)}"] if source.cannot_tell else []
        )
        typer.echo(f"  {spans} spans read as {'; '.join([source.label, *said])}")
    for note in result.notes:
        typer.echo(f"assay: warning: {note}", err=True)
