"""The knowledge layer through the CLI against the stand-in API and a real Neo4j, on the example vault without
its shipped extraction: a refused run fails loudly; --batch end to end, with a kill between submit and collect;
kb extract --sample and status."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic_standin import ChatStandIn
from click.testing import CliRunner
from knowledge_helpers import replay, system_text
from standin_http import keep_local

from kb.cli import cli
from kb.extract.audit import AUDIT

BATCHES = "/v1/messages/batches"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


@pytest.fixture
def standin() -> Iterator[ChatStandIn]:
    with ChatStandIn(replay()) as s:
        yield s


@pytest.fixture
def vault(kb_env: Path, example_vault: Path, standin: ChatStandIn, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example vault without its shipped cache, kb pointed at the stand-in with a key."""
    shutil.rmtree(example_vault / ".kb")
    monkeypatch.setenv("KB_VAULT", str(example_vault))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.base_url)
    keep_local(monkeypatch)
    kb_env.mkdir(parents=True, exist_ok=True)
    (kb_env / "config.toml").write_text("cost_threshold_usd = 100.0\nextract_workers = 4\n")
    return example_vault


def refresh(*flags: str) -> tuple[int, dict[str, Any]]:
    code, out = invoke("refresh", "--no-embed", "--json", *flags)
    return code, json.loads(out[: out.rindex("}") + 1])


def test_a_refresh_whose_calls_are_all_refused_exits_non_zero(vault: Path, standin: ChatStandIn, store: object) -> None:
    standin.anthropic_models = lambda m: False
    code, out = invoke("refresh", "--no-embed")
    assert code == 1 and "Knowledge layer (claude-haiku-5-5): failed" in out
    assert (
        "Error: the knowledge layer failed: Anthropic answered 404 for model 'claude-haiku-5-5' (model: "
        "claude-haiku-5-5)" in out
    )
    assert len(standin.calls("/v1/messages")) <= 4  # stopped at once (one per worker at most), not 34 times
    code, data = refresh()
    assert code == 1 and data["knowledge"]["status"] == "failed" and data["knowledge"]["extracted"] == 0


def test_a_refused_audit_fails_the_run_too(vault: Path, standin: ChatStandIn, store: object) -> None:
    standin.refuse = lambda body: "audit refused by the test" if system_text(body) == AUDIT else None
    code, data = refresh()
    k = data["knowledge"]
    assert code == 1 and k["status"] == "failed" and "audit refused by the test" in k["message"]
    assert k["extracted"] > 20  # the extraction itself succeeded and stays cached
    standin.refuse = lambda body: None
    code, data = refresh()
    assert code == 0 and data["knowledge"]["status"] == "built" and data["knowledge"]["extracted"] == 0
    assert data["knowledge"]["checks_estimate"]["calls"] > 0 and data["knowledge"]["audit"]


def kb_proc(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", "from kb.cli import main; main()", *args],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_batch_end_to_end_with_a_kill_between_submit_and_collect(
    vault: Path, kb_env: Path, standin: ChatStandIn, store: object
) -> None:
    standin.hang_next, standin.hang_seconds = 1, 3.0  # the batch create answers late: kill kb while it waits
    proc = kb_proc("refresh", "--no-embed", "--batch", "--json")
    states = kb_env / "cache" / "extract" / "batches"
    deadline = time.monotonic() + 300
    while not [r for r in standin.calls(BATCHES) if r.method == "POST"] and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # the create request has arrived; its answer has not
    proc.wait()
    [state] = list(states.glob("*.json"))
    assert json.loads(state.read_text())["id"] is None  # killed before it learnt the batch id
    while not standin.batches and time.monotonic() < deadline:
        time.sleep(0.05)  # the API creates the batch anyway
    assert len(standin.batches) == 1
    code, data = refresh("--batch")
    k = data["knowledge"]
    assert code == 0 and k["batches"]["stored"] > 20 and k["status"] == "submitted"  # collected; then the chats
    code, data = refresh()
    k = data["knowledge"]
    assert code == 0 and k["status"] == "built" and k["extracted"] == 0 and k["counts"]["entities"] > 50
    assert len(standin.batches) == 2 and standin.calls("/v1/messages") != []  # the audit runs synchronously
    extract_calls = [r for r in standin.calls("/v1/messages") if "<passage>" in str(r.body)]
    assert extract_calls == []  # every chunk went through a batch, none twice


def test_sample_shows_what_was_found_per_chunk(vault: Path, standin: ChatStandIn, store: object) -> None:
    code, data = refresh("--dry-run")
    assert code == 0 and data["knowledge"]["status"] == "dry-run" and data["knowledge"]["estimate"]["usd"] > 0
    assert standin.requests == []  # a dry run sends nothing, not even a token count or a model lookup
    code, out = invoke("extract", "--sample", "3", "--folder", "Company", "--json")
    data = json.loads(out)
    assert code == 0 and len(data["chunks"]) == 3 and data["extracted"] == 3 and data["estimate"] > 0
    assert all(c["path"].startswith("Company/") for c in data["chunks"])
    assert len(standin.calls("/v1/messages")) == 3
    code, out = invoke("extract", "--sample", "3", "--folder", "Company")
    assert code == 0 and "3 from the cache" in out and "Estimate" not in out  # cached: nothing to pay
    assert "    entity " in out and "    claim " in out and "(fact" in out
    code, out = invoke("extract", "--sample", "2", "--folder", "Nowhere")
    assert code == 1 and "no chunks in folder 'Nowhere'" in out


def test_extract_status_collects_batches(vault: Path, standin: ChatStandIn, store: object) -> None:
    standin.end_batches = False
    code, data = refresh("--batch")
    assert code == 0 and data["knowledge"]["status"] == "submitted"
    code, out = invoke("extract", "status", "--json")
    assert code == 0 and len(json.loads(out)["waiting"]) == 1
    standin.end_batches = True
    code, out = invoke("extract", "status", "--json")
    status = json.loads(out)
    assert code == 0 and status["stored"] > 20 and status["knowledge"]["counts"]["entities"] > 20
