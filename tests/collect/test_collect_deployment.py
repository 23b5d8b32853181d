"""The deployment material parses and its parts reference each other consistently.

No Docker engine runs here: we check docker-compose.yml, collector/otelcol.yaml and
collector/Dockerfile against each other, and run the compose file's example agent against a real
``assay collect``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import yaml
from collector_process import CollectorFactory

from assay.store import read_spans

ROOT = Path(__file__).resolve().parents[2]


def _load(path: str) -> dict:  # type: ignore[type-arg]
    document = yaml.safe_load((ROOT / path).read_text())
    assert isinstance(document, dict)
    return document


def _entrypoint() -> list[str]:
    text = (ROOT / "collector" / "Dockerfile").read_text().replace("\\\n", " ")
    (line,) = [line for line in text.splitlines() if line.startswith("ENTRYPOINT")]
    return list(yaml.safe_load(line.removeprefix("ENTRYPOINT")))


def _option(arguments: list[str], name: str) -> str:
    return arguments[arguments.index(name) + 1]


def test_compose_otelcol_and_dockerfile_agree() -> None:
    compose = _load("docker-compose.yml")
    otelcol = _load("collector/otelcol.yaml")
    services = compose["services"]
    assert {"agent", "otelcol", "assay-collector"} <= set(services)

    # otelcol: the mounted config is this file, and the command points at it
    mounts = dict(v.rsplit(":", 2)[:2] for v in services["otelcol"]["volumes"])
    (config_path,) = [c for h, c in mounts.items() if h == "./collector/otelcol.yaml"]
    assert f"--config={config_path}" in services["otelcol"]["command"]

    # the otelcol config is internally consistent
    pipelines = otelcol["service"]["pipelines"]
    for pipeline in pipelines.values():
        for kind in ("receivers", "processors", "exporters"):
            for name in pipeline.get(kind, []):
                assert name in otelcol[kind], f"{name} is not defined under {kind}"
    assert set(otelcol["service"]["extensions"]) <= set(otelcol["extensions"])
    assert "loadbalancing/assay" in otelcol["exporters"]
    assert otelcol["exporters"]["loadbalancing/assay"]["routing_key"] == "traceID"

    # the assay collector: ports and output folder from the Dockerfile's entrypoint
    entrypoint = _entrypoint()
    assert entrypoint[:2] == ["assay", "collect"]
    http_port = _option(entrypoint, "--http-port")
    grpc_port = _option(entrypoint, "--grpc-port")
    out = _option(entrypoint, "--out")
    assert _option(entrypoint, "--host") == "0.0.0.0"
    dockerfile = (ROOT / "collector" / "Dockerfile").read_text()
    assert re.search(rf"^EXPOSE .*\b{grpc_port}\b.*\b{http_port}\b", dockerfile, re.M)
    for source in re.findall(r"^COPY (\S+)", dockerfile, re.M):
        assert (ROOT / source).exists(), source
    collector = services["assay-collector"]
    assert collector["build"]["dockerfile"] == "collector/Dockerfile"
    assert (ROOT / collector["build"]["dockerfile"]).exists()
    assert f"./traces:{out}" in collector["volumes"]
    assert {http_port, grpc_port} <= {str(p) for p in collector["expose"]}

    # every otelcol exporter aimed at assay reaches the assay-collector service on its port
    http_exporter = otelcol["exporters"]["otlphttp/assay"]
    endpoint = urlparse(http_exporter["endpoint"])
    assert (endpoint.hostname, str(endpoint.port)) == ("assay-collector", http_port)
    assert http_exporter["encoding"] == "proto"
    for host in otelcol["exporters"]["loadbalancing/assay"]["resolver"]["static"]["hostnames"]:
        name, port = host.split(":")
        assert name in services and port == grpc_port
    assert "otlphttp/assay" in pipelines["traces"]["exporters"]

    # the token: otelcol sends the variable both services are given
    assert "${env:ASSAY_COLLECT_TOKEN}" in http_exporter["headers"]["Authorization"]
    for service in ("otelcol", "assay-collector"):
        assert "ASSAY_COLLECT_TOKEN" in services[service]["environment"]

    # the agent sends to otelcol's OTLP/HTTP receiver
    agent = services["agent"]
    agent_endpoint = urlparse(agent["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"])
    assert agent_endpoint.hostname == "otelcol"
    receiver = otelcol["receivers"]["otlp"]["protocols"]["http"]["endpoint"]
    assert receiver.endswith(f":{agent_endpoint.port}")
    script = [v.split(":")[0] for v in agent["volumes"]]
    assert all((ROOT / s).exists() for s in script)
    assert set(agent["depends_on"]) == {"otelcol"}
    assert set(services["otelcol"]["depends_on"]) == {"assay-collector"}


def test_example_agent_reaches_a_real_collector(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    collector = collector_factory(tmp_path / "traces", ["--token", "t0k"]).start()
    env = dict(
        os.environ,
        OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
        OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer t0k",
        OTEL_SERVICE_NAME="example-agent",
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "collector" / "example_agent.py"), "--trials", "5"],
        env=env,
        check=True,
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert done.stdout == f"example_agent: 5 trials, 10 spans sent to {collector.url}/v1/traces\n"
    assert collector.terminate() == 0
    spans = read_spans(collector.out)
    assert spans.height == 10
    assert set(spans["service_name"].to_list()) == {"example-agent"}
    assert sorted(spans["assay_trial_index"].drop_nulls().to_list()) == [0, 1, 2, 3, 4]


def test_example_agent_says_when_nothing_was_accepted() -> None:
    env = dict(
        os.environ, OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9", OTEL_EXPORTER_OTLP_TIMEOUT="2"
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "collector" / "example_agent.py"), "--trials", "2"],
        env=env,
        timeout=120,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stdout == "example_agent: 2 trials, 0 spans sent to http://127.0.0.1:9/v1/traces\n"
    assert done.stderr.endswith("example_agent: 4 spans not accepted (see above)\n")
