"""The continuous-run workflow is checked, not trusted: a strict schema of the workflow
syntax it uses (actionlint has no offline install on PyPI: its package downloads the binary
at build time), references between jobs and steps, every shell script through ``bash -n``,
the cadence against ``needle schedule``, and the bench script run for real against loopback
engines."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from test_finance_evals import ROWS

from needle_lib.cli import main
from needle_lib.continuous.schedule import SCHEDULE, cron_lines, dispatch_choice, due
from needle_lib.paths import REPO_ROOT
from needle_lib.search.registry import ENGINES
from needle_lib.testing.search_server import FakeSearchServer
from needle_lib.tomlconf import ConfigError

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "search-benchmarks.yml"
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "github-workflow.schema.json")
                    .read_text(encoding="utf-8"))
SCRIPTS = sorted((REPO_ROOT / "scripts").glob("*.sh"))
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}")
CONTEXTS = {"github", "inputs", "secrets", "steps", "needs", "matrix", "env", "toJSON",
            "fromJSON", "always", "success", "failure"}


def load_workflow(path: Path = WORKFLOW) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in data:  # YAML 1.1 reads the key `on` as a boolean
        data["on"] = data.pop(True)
    return data


@pytest.fixture(scope="module")
def workflow() -> dict:
    return load_workflow()


def schema_errors(data: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(data)]


def test_workflow_follows_the_schema(workflow):
    assert schema_errors(workflow) == []


@pytest.mark.parametrize("mutate, expected", [
    (lambda w: w["jobs"]["plan"].__setitem__("runs_on", "x"), "runs_on"),
    (lambda w: w["on"]["schedule"].append({"cron": "17 * *"}), "cron"),
    (lambda w: w["jobs"]["bench"]["steps"][0].__setitem__("run", "echo"), "is valid under"),
    (lambda w: w["jobs"]["publish"].__setitem__("timeout-minutes", "30"), "timeout-minutes"),
])
def test_the_schema_catches_mistakes(workflow, mutate, expected):
    broken = copy.deepcopy(workflow)
    mutate(broken)
    assert any(expected in error for error in schema_errors(broken)), schema_errors(broken)


def test_cron_lines_are_the_schedule(workflow):
    assert [e["cron"] for e in workflow["on"]["schedule"]] == list(cron_lines())
    hourly = [b for b, c in SCHEDULE.items() if c.hour is None]
    for line, benches in cron_lines().items():  # every hour of the day runs the hourly benches
        assert set(hourly) <= set(benches), line
    daily_hours = sorted(c.hour for c in SCHEDULE.values() if c.hour is not None)
    assert len(set(daily_hours)) == len(daily_hours)  # spread: one daily bench per hour


def test_every_bench_can_be_dispatched_by_hand(workflow):
    inputs = workflow["on"]["workflow_dispatch"]["inputs"]
    assert set(SCHEDULE) <= set(inputs)
    assert all(inputs[b]["type"] == "boolean" for b in SCHEDULE)


def test_jobs_steps_and_outputs_refer_to_what_exists(workflow):
    jobs = workflow["jobs"]
    text = WORKFLOW.read_text(encoding="utf-8")
    for name, job in jobs.items():
        needs = job.get("needs", [])
        for need in [needs] if isinstance(needs, str) else needs:
            assert need in jobs, f"{name} needs unknown job {need}"
        ids = {s["id"] for s in job["steps"] if "id" in s}
        for output in job.get("outputs", {}).values():
            for step in re.findall(r"steps\.([\w-]+)\.outputs", output):
                assert step in ids, f"{name} output reads unknown step {step}"
    for job, output in re.findall(r"needs\.([\w-]+)\.outputs\.([\w-]+)", text):
        assert output in jobs[job].get("outputs", {}), f"needs.{job}.outputs.{output}"
    for expression in EXPRESSION.findall(text):
        names = set(re.findall(r"(?<![.\w])([A-Za-z_]+)\s*[.(]", expression))
        assert names <= CONTEXTS, f"unknown context in ${{{{{expression}}}}}"


def test_engine_keys_come_from_repository_secrets(workflow):
    engines = workflow["env"]["ENGINES"].split(",")
    assert set(engines) <= set(ENGINES), set(engines) - set(ENGINES)
    env = workflow["jobs"]["bench"]["env"]
    for engine in engines:
        key = ENGINES[engine].key_env
        assert env.get(key) == f"${{{{ secrets.{key} }}}}", key
    assert env["OPENROUTER_API_KEY"] == "${{ secrets.OPENROUTER_API_KEY }}"
    text = WORKFLOW.read_text(encoding="utf-8")
    assert not re.search(r"(api[_-]?key|token)\s*[:=]\s*['\"]?[A-Za-z0-9]{16,}", text, re.I)


def test_every_shell_script_parses(workflow, tmp_path):
    scripts = [step["run"] for job in workflow["jobs"].values() for step in job["steps"]
               if "run" in step]
    scripts += [path.read_text(encoding="utf-8") for path in SCRIPTS]
    assert len(SCRIPTS) >= 2
    for number, script in enumerate(scripts):
        plain = EXPRESSION.sub("EXPR", script)  # GitHub substitutes these before bash runs
        result = subprocess.run(["bash", "-n"], input=plain, capture_output=True, text=True,
                                check=False)
        assert result.returncode == 0, f"script {number}: {result.stderr}\n{script}"


def test_scripts_the_workflow_calls_exist(workflow):
    text = WORKFLOW.read_text(encoding="utf-8")
    for name in re.findall(r"scripts/[\w.-]+\.sh", text):
        assert (REPO_ROOT / name).is_file(), name


def test_due_follows_the_line_that_fired_not_the_clock(tmp_path):
    (tmp_path / "finance.jsonl").write_text("{}\n")
    (tmp_path / "scholar.jsonl").write_text("{}\n")
    (tmp_path / "legal.jsonl").write_text("")  # empty gold is missing gold
    found = due(cron="17 0 * * *", gold_dir=tmp_path)
    assert [(d.bench, d.reason) for d in found] == [
        ("news", "schedule"), ("finance", "schedule"), ("legal", "gold missing")]
    rest = due(cron="17 1-5,7-11,13-17,19-23 * * *", gold_dir=tmp_path)
    assert [d.bench for d in rest] == ["news", "legal"]
    picked = due(dispatch=dispatch_choice('{"scholar": true, "news": "false"}'))
    assert [(d.bench, d.reason) for d in picked] == [("scholar", "dispatch")]
    with pytest.raises(ConfigError, match="not in the schedule"):
        due(cron="17 3 * * *")
    with pytest.raises(ConfigError, match="unknown bench 'nope'"):
        due(dispatch=["nope"])


def test_schedule_command_writes_the_job_matrix(tmp_path, capsys):
    output = tmp_path / "github_output"
    assert main(["schedule", "--cron", "17 6 * * *", "--gold-dir", str(tmp_path),
                 "--github-output", str(output)]) == 0
    assert output.read_text() == (
        'benches=["news", "finance", "agentic_rare", "scholar", "legal"]\n')
    assert "finance\tgold missing" in capsys.readouterr().out
    assert main(["schedule"]) == 0
    assert "17 1-5,7-11,13-17,19-23 * * *" in capsys.readouterr().out


SEARCH_SCRIPT = {
    ("exa", "nvidia ceo"): [{"url": "https://a.example/2", "title": "Leadership",
                             "snippet": "CEO Jensen Huang"}],
    ("brave", "nvidia ceo"): 503,
}


def test_bench_script_runs_a_bench_and_its_report_publishes(tmp_path, capsys):
    """The workflow's bench step for real: kept gold, two loopback engines (one failing on
    one query), exit 0 although cases failed, then the report goes into a history."""
    data, out = tmp_path / "data", tmp_path / "out"
    (data / "gold").mkdir(parents=True)
    (data / "gold" / "finance.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    with FakeSearchServer(SEARCH_SCRIPT) as server:
        env = {**os.environ, **server.env(), "ENGINES": "exa,brave", "REUSE_GOLD": "true",
               "PYTEST_WORKERS": "1", "NEEDLE_CACHE_DIR": str(tmp_path / "cache"),
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        result = subprocess.run(["bash", "scripts/search-bench.sh", "finance", str(data),
                                 str(out)], cwd=REPO_ROOT, env=env, capture_output=True,
                                text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "failed" in result.stdout  # misses are results, not a broken run
    (report,) = (out / "search").glob("finance__finance__*.json")
    assert (out / "gold" / "finance.jsonl").read_text() == \
        (data / "gold" / "finance.jsonl").read_text()
    assert (out / "finance.html").is_file()
    assert main(["publish", str(report), "--site", str(tmp_path / "history")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "history" / "history.jsonl").open()]
    brave = next(r for r in rows if r["engine"] == "brave")
    assert brave["search_errors"] == 1 and brave["bench"] == "finance"
    assert "added finance run" in capsys.readouterr().out


def test_bench_script_refuses_an_unknown_bench(tmp_path):
    result = subprocess.run(["bash", "scripts/search-bench.sh", "nope", str(tmp_path),
                             str(tmp_path / "out")], cwd=REPO_ROOT, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 2 and "unknown bench 'nope'" in result.stderr
