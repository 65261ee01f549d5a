"""The real ``dagster dev`` for end-to-end tests, driven only through the webserver's GraphQL API.

An end-to-end test must see what a user of the deployment sees: the code location as the webserver
loads it, the daemon's sensors and run queue, runs in their own processes. So nothing here calls
project code; every question and every action is a GraphQL request to ``127.0.0.1``. Field names
follow the schema of dagster-graphql 1.13 (``dagster_graphql/schema``).

Every wait is bounded, and stopping checks that no process of the server outlives it, so a broken
test cannot leave a webserver, daemon, code server or run worker behind on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

TERMINAL_RUN_STATUSES = frozenset({"SUCCESS", "FAILURE", "CANCELED"})
STARTUP_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0
REQUEST_TIMEOUT = 30.0
LOG_TAIL = 3000

# No telemetry from tests; the rest of the instance is Dagster's default (SQLite under DAGSTER_HOME,
# queued run coordinator run by the daemon that ``dagster dev`` starts).
DAGSTER_YAML = "telemetry:\n  enabled: false\n"

# Metadata values as the API returns them, decoded into Python values. Ints and floats are read from
# their string forms: intValue is null past 32 bits and floatValue is null for nan/inf.
METADATA_FRAGMENT = """
fragment MetadataEntries on MetadataEntry {
  __typename
  label
  ... on FloatMetadataEntry { floatRepr }
  ... on IntMetadataEntry { intRepr }
  ... on TextMetadataEntry { text }
  ... on MarkdownMetadataEntry { mdStr }
  ... on PathMetadataEntry { path }
  ... on BoolMetadataEntry { boolValue }
  ... on JsonMetadataEntry { jsonString }
  ... on UrlMetadataEntry { url }
  ... on TimestampMetadataEntry { timestamp }
}
"""
_DECODERS: dict[str, Callable[[dict], Any]] = {
    "FloatMetadataEntry": lambda e: float(e["floatRepr"]),
    "IntMetadataEntry": lambda e: int(e["intRepr"]),
    "TextMetadataEntry": lambda e: e["text"],
    "MarkdownMetadataEntry": lambda e: e["mdStr"],
    "PathMetadataEntry": lambda e: e["path"],
    "BoolMetadataEntry": lambda e: e["boolValue"],
    "JsonMetadataEntry": lambda e: json.loads(e["jsonString"]),
    "UrlMetadataEntry": lambda e: e["url"],
    "TimestampMetadataEntry": lambda e: e["timestamp"],
}


class DagsterDevError(AssertionError):
    """The server misbehaved or a wait ran out; the message carries the server log's tail."""


def free_port() -> int:
    """A port the OS just handed out on loopback (closed again, so dagster dev can bind it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _asset_key(asset: str) -> dict:
    """``"a/b"`` -> ``{"path": ["a", "b"]}`` (AssetKeyInput)."""
    return {"path": asset.split("/")}


def decode_metadata(entries: list[dict]) -> dict[str, Any]:
    """MetadataEntries fragments to ``{label: value}``; types not decoded here map to None."""
    return {e["label"]: _DECODERS[e["__typename"]](e) if e["__typename"] in _DECODERS else None for e in entries}


def _unwrap(result: dict, expected: str, what: str) -> dict:
    """An ``...OrError`` union: the expected type, else a readable error (its message or errors)."""
    if result.get("__typename") != expected:
        raise DagsterDevError(f"{what}: got {result.get('__typename')}: "
                              f"{result.get('message') or result.get('errors') or result}")
    return result


# --- processes ------------------------------------------------------------------------------------

def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) from /proc, or None when the pid is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = raw[raw.rindex(")") + 2:].split()  # the command name may hold spaces and parentheses
    return fields[0], int(fields[1]), int(fields[2])


def _all_stats() -> dict[int, tuple[str, int, int]]:
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _proc_stat(int(entry))) is not None:
            stats[int(entry)] = stat
    return stats


def _family(root: int) -> set[int]:
    """The root, its descendants (even ones that started their own session) and its process group."""
    stats = _all_stats()
    found, pending = {root}, [root]
    while pending:
        parent = pending.pop()
        for pid, (_, ppid, _) in stats.items():
            if ppid == parent and pid not in found:
                found.add(pid)
                pending.append(pid)
    return found | {pid for pid, (_, _, pgrp) in stats.items() if pgrp == root}


def _alive(pid: int) -> bool:
    stat = _proc_stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")  # a zombie has exited; only its parent's wait is due


def _describe(pid: int) -> str:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmdline = "?"
    return f"{pid}: {cmdline[:200]}"


# --- the server -----------------------------------------------------------------------------------

class DagsterDev:
    """``dagster dev -w workspace.yaml`` on 127.0.0.1, with a private DAGSTER_HOME, as a context manager.

    ``env`` is laid over this process's environment; a value of None removes the variable (so a test
    can make sure e.g. ANTHROPIC_API_KEY does not leak into the server).
    """

    def __init__(self, project_root: Path, env: Mapping[str, str | None], port: int | None = None,
                 startup_timeout: float = STARTUP_TIMEOUT):
        self.project_root = Path(project_root)
        self.env = dict(env)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.startup_timeout = startup_timeout
        self.home: Path | None = None
        self.log_path: Path | None = None
        self._process: subprocess.Popen | None = None
        self._log = None
        self._selector: dict | None = None
        # Requests go straight to loopback: an HTTP(S)_PROXY in the environment must not be used.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # lifecycle

    def __enter__(self) -> DagsterDev:
        self.home = Path(tempfile.mkdtemp(prefix="dagster-e2e-"))
        (self.home / "dagster.yaml").write_text(DAGSTER_YAML)
        self.log_path = self.home / "dagster-dev.log"
        env = {**os.environ, **self.env, "DAGSTER_HOME": str(self.home)}
        env = {key: value for key, value in env.items() if value is not None}
        self._log = self.log_path.open("wb")
        try:
            self._process = subprocess.Popen(
                [str(self._dagster()), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(self.port)],
                cwd=self.project_root, env=env, stdin=subprocess.DEVNULL, stdout=self._log,
                stderr=subprocess.STDOUT, start_new_session=True,  # its own process group, stopped as one
            )
            deadline = time.monotonic() + self.startup_timeout
            self.wait_for(self._server_info, deadline - time.monotonic(), "the webserver to answer /server_info",
                          interval=0.5)
            self.wait_for(self._location_loaded, deadline - time.monotonic(), "the code location to load",
                          interval=0.5)
        except BaseException:
            self._shutdown(raise_on_survivors=False)
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:  # pytest shows captured output of a failed test: the server's side of it
            print(f"--- last {LOG_TAIL} chars of the dagster dev log ---\n{self.log_tail()}", file=sys.stderr)
        self._shutdown(raise_on_survivors=exc_type is None)

    @staticmethod
    def _dagster() -> Path:
        """The dagster CLI of the venv running the tests (sys.executable is not resolved: the venv's
        python is a symlink to the base interpreter)."""
        candidate = Path(sys.executable).parent / "dagster"
        if candidate.exists():
            return candidate
        found = shutil.which("dagster")
        if not found:
            raise DagsterDevError(f"no dagster CLI next to {sys.executable} nor on PATH")
        return Path(found)

    def _shutdown(self, raise_on_survivors: bool) -> None:
        """SIGTERM to the whole group, up to STOP_TIMEOUT for it to go, then SIGKILL; no survivor allowed."""
        survivors: list[int] = []
        if self._process is not None:
            root = self._process.pid

            def members(known: set[int]) -> set[int]:
                """Processes seen so far plus any new ones; once dagster dev itself is reaped, its pid
                may be reused by an unrelated process and is dropped."""
                known = known | _family(root)
                return known - {root} if self._process.poll() is not None else known

            family = members(set())
            self._signal(root, family, signal.SIGTERM)
            deadline = time.monotonic() + STOP_TIMEOUT
            while time.monotonic() < deadline:
                family = members(family)
                if self._process.poll() is not None and not any(_alive(pid) for pid in family):
                    break
                time.sleep(0.2)
            if any(_alive(pid) for pid in members(family)):
                self._signal(root, members(family), signal.SIGKILL)
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline and any(_alive(pid) for pid in members(family)):
                    time.sleep(0.1)
            if self._process.poll() is None:
                self._process.wait(timeout=5)
            survivors = [pid for pid in members(family) if _alive(pid)]
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if survivors:
            message = "dagster dev left processes behind:\n" + "\n".join(_describe(pid) for pid in survivors)
            for pid in survivors:  # do not leave them running, even though this is a failure
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)
            self.home = None
        if survivors:
            if raise_on_survivors:
                raise DagsterDevError(message)
            print(message, file=sys.stderr)

    @staticmethod
    def _signal(root: int, family: set[int], sig: signal.Signals) -> None:
        try:
            os.killpg(root, sig)
        except ProcessLookupError:
            pass
        for pid in family:  # descendants that left the group (own session) get it too
            if _alive(pid):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, chars: int = LOG_TAIL) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        data = self.log_path.read_bytes()
        return data[-chars:].decode(errors="replace")

    # waiting

    def wait_for(self, predicate: Callable[[], T | None], timeout: float, what: str, interval: float = 2.0) -> T:
        """Poll ``predicate`` until it returns something other than None or False, at most ``timeout`` s.

        Fails at once if the server process has exited, and on timeout, with the log's tail: a wait
        that runs out is nearly always explained there.
        """
        deadline = time.monotonic() + timeout
        last: Any = None
        while True:
            if self._process is not None and self._process.poll() is not None:
                raise DagsterDevError(f"dagster dev exited with {self._process.returncode} while waiting for "
                                      f"{what}; log tail:\n{self.log_tail()}")
            last = predicate()
            if last is not None and last is not False:
                return last
            if time.monotonic() >= deadline:
                raise DagsterDevError(f"timed out after {timeout:.0f}s waiting for {what} (last value: {last!r}); "
                                      f"log tail:\n{self.log_tail()}")
            time.sleep(max(0.0, min(interval, deadline - time.monotonic())))

    def _server_info(self) -> dict | None:
        try:
            with self._opener.open(f"{self.url}/server_info", timeout=5) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
            return None

    def server_info(self) -> dict:
        info = self._server_info()
        if info is None:
            raise DagsterDevError(f"{self.url}/server_info does not answer")
        return info

    def _location_loaded(self) -> bool:
        """True once every code location has loaded; a location that failed to load fails at once."""
        workspace = _unwrap(self.graphql("""
            query {
              workspaceOrError {
                __typename
                ... on Workspace {
                  locationEntries {
                    name loadStatus
                    locationOrLoadError { __typename ... on PythonError { message stack } }
                  }
                }
                ... on PythonError { message }
              }
            }""")["workspaceOrError"], "Workspace", "workspace")
        entries = workspace["locationEntries"]
        for entry in entries:
            error = entry["locationOrLoadError"]
            if error and error["__typename"] == "PythonError":
                raise DagsterDevError(f"code location {entry['name']} failed to load: {error['message']}\n"
                                      + "".join(error["stack"]))
        return bool(entries) and all(e["loadStatus"] == "LOADED" and e["locationOrLoadError"] for e in entries)

    # GraphQL

    def graphql(self, query: str, variables: dict | None = None) -> dict:
        """POST /graphql; returns ``data``, raises with the errors when the response has any."""
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(f"{self.url}/graphql", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with self._opener.open(request, timeout=REQUEST_TIMEOUT) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:  # a query the schema rejects comes back as 400 with errors
            raise DagsterDevError(f"GraphQL HTTP {exc.code}: {exc.read().decode(errors='replace')[:LOG_TAIL]}") from exc
        if payload.get("errors"):
            raise DagsterDevError(f"GraphQL errors: {json.dumps(payload['errors'], indent=1)[:LOG_TAIL]}")
        return payload["data"]

    def repository_selector(self) -> dict:
        """``{"repositoryLocationName", "repositoryName"}`` of the one repository (a Definitions object
        is the repository ``__repository__`` of its code location)."""
        if self._selector is None:
            data = self.graphql("""
                query {
                  repositoriesOrError {
                    __typename
                    ... on RepositoryConnection { nodes { name location { name } } }
                    ... on Error { message }
                  }
                }""")
            nodes = _unwrap(data["repositoriesOrError"], "RepositoryConnection", "repositories")["nodes"]
            if len(nodes) != 1:
                raise DagsterDevError(f"expected one repository, found {[(n['location']['name'], n['name']) for n in nodes]}")
            self._selector = {"repositoryLocationName": nodes[0]["location"]["name"],
                              "repositoryName": nodes[0]["name"]}
        return dict(self._selector)

    def sensors(self) -> dict[str, str]:
        """Sensor name -> RUNNING or STOPPED (the instigator's state, defaults from code applied)."""
        data = self.graphql("""
            query($selector: RepositorySelector!) {
              sensorsOrError(repositorySelector: $selector) {
                __typename
                ... on Sensors { results { name sensorState { status } } }
                ... on Error { message }
              }
            }""", {"selector": self.repository_selector()})
        results = _unwrap(data["sensorsOrError"], "Sensors", "sensors")["results"]
        return {s["name"]: s["sensorState"]["status"] for s in results}

    def set_sensor(self, name: str, running: bool) -> str:
        """Start or stop a sensor as the UI's toggle does; returns its new status.

        startSensor takes a SensorSelector; stopSensor takes the Sensor's compound ``id``.
        """
        selector = {**self.repository_selector(), "sensorName": name}
        if running:
            data = self.graphql("""
                mutation($selector: SensorSelector!) {
                  startSensor(sensorSelector: $selector) {
                    __typename ... on Sensor { sensorState { status } } ... on Error { message }
                  }
                }""", {"selector": selector})
            return _unwrap(data["startSensor"], "Sensor", f"starting {name}")["sensorState"]["status"]
        data = self.graphql("""
            query($selector: SensorSelector!) {
              sensorOrError(sensorSelector: $selector) { __typename ... on Sensor { id } ... on Error { message } }
            }""", {"selector": selector})
        sensor_id = _unwrap(data["sensorOrError"], "Sensor", f"sensor {name}")["id"]
        data = self.graphql("""
            mutation($id: String!) {
              stopSensor(id: $id) {
                __typename
                ... on StopSensorMutationResult { instigationState { status } }
                ... on Error { message }
              }
            }""", {"id": sensor_id})
        return _unwrap(data["stopSensor"], "StopSensorMutationResult", f"stopping {name}")["instigationState"]["status"]

    def schedules(self) -> dict[str, str]:
        data = self.graphql("""
            query($selector: RepositorySelector!) {
              schedulesOrError(repositorySelector: $selector) {
                __typename
                ... on Schedules { results { name scheduleState { status } } }
                ... on Error { message }
              }
            }""", {"selector": self.repository_selector()})
        results = _unwrap(data["schedulesOrError"], "Schedules", "schedules")["results"]
        return {s["name"]: s["scheduleState"]["status"] for s in results}

    def asset_nodes(self) -> list[str]:
        """Keys (``a/b``) of the assets the code location defines."""
        data = self.graphql("query { assetNodes { assetKey { path } } }")
        return sorted("/".join(n["assetKey"]["path"]) for n in data["assetNodes"])

    def partitions(self, partitions_def_name: str) -> list[str]:
        """Keys of a (dynamic) partitions definition, read through any asset partitioned by it."""
        data = self.graphql("""
            query { assetNodes { assetKey { path } partitionDefinition { name } partitionKeys } }""")
        for node in data["assetNodes"]:
            if (node["partitionDefinition"] or {}).get("name") == partitions_def_name:
                return node["partitionKeys"]
        raise DagsterDevError(f"no asset is partitioned by {partitions_def_name!r}")

    def latest_materialization(self, asset: str, partition: str | None = None) -> dict | None:
        """The newest materialization (of ``partition``, else of any partition), or None.

        ``{"runId", "timestamp" (epoch seconds), "partition", "metadata": {label: decoded value}}``.
        """
        data = self.graphql("""
            query($key: AssetKeyInput!, $partitions: [String!]) {
              assetOrError(assetKey: $key) {
                __typename
                ... on Asset {
                  assetMaterializations(partitions: $partitions, limit: 1) {
                    runId timestamp partition metadataEntries { ...MetadataEntries }
                  }
                }
                ... on Error { message }
              }
            }""" + METADATA_FRAGMENT,
            {"key": _asset_key(asset), "partitions": None if partition is None else [partition]})
        result = data["assetOrError"]
        if result["__typename"] == "AssetNotFoundError":
            return None
        events = _unwrap(result, "Asset", f"asset {asset}")["assetMaterializations"]
        if not events:
            return None
        event = events[0]
        return {"runId": event["runId"], "timestamp": int(event["timestamp"]) / 1000,  # the API gives ms as a string
                "partition": event["partition"], "metadata": decode_metadata(event["metadataEntries"])}

    def check_results(self, asset: str, partition: str | None = None, run_id: str | None = None) -> dict[str, bool]:
        """Check name -> passed, from each check's newest execution (of ``partition`` if given; only
        when that execution belongs to run ``run_id`` if given, so a wait for one run's checks is not
        met by an earlier run's).

        A check that was evaluated reports its evaluation's ``success``; one whose step errored
        (EXECUTION_FAILED) counts as not passed; checks not executed yet, in progress or skipped are left out.
        """
        key = _asset_key(asset)
        data = self.graphql("""
            query($key: AssetKeyInput!) {
              assetNodeOrError(assetKey: $key) {
                __typename
                ... on AssetNode {
                  assetChecksOrError { __typename ... on AssetChecks { checks { name } } ... on Error { message } }
                }
                ... on Error { message }
              }
            }""", {"key": key})
        node = _unwrap(data["assetNodeOrError"], "AssetNode", f"asset node {asset}")
        checks = _unwrap(node["assetChecksOrError"], "AssetChecks", f"checks of {asset}")["checks"]
        results: dict[str, bool] = {}
        for check in checks:
            executions = self.graphql("""
                query($key: AssetKeyInput!, $check: String!, $partition: String) {
                  assetCheckExecutions(assetKey: $key, checkName: $check, partition: $partition, limit: 1) {
                    runId status evaluation { success }
                  }
                }""", {"key": key, "check": check["name"], "partition": partition})["assetCheckExecutions"]
            if not executions or run_id not in (None, executions[0]["runId"]):
                continue
            latest = executions[0]
            if latest["evaluation"] is not None:
                results[check["name"]] = latest["evaluation"]["success"]
            elif latest["status"] == "EXECUTION_FAILED":
                results[check["name"]] = False
        return results

    def runs(self, limit: int = 50) -> list[dict]:
        """Newest first: ``{"runId", "status", "jobName", "tags": {key: value}}``."""
        data = self.graphql("""
            query($limit: Int) {
              runsOrError(limit: $limit) {
                __typename
                ... on Runs { results { runId status jobName tags { key value } } }
                ... on Error { message }
              }
            }""", {"limit": limit})
        results = _unwrap(data["runsOrError"], "Runs", "runs")["results"]
        return [{**run, "tags": {t["key"]: t["value"] for t in run["tags"]}} for run in results]

    def run_status(self, run_id: str) -> str:
        data = self.graphql("""
            query($runId: ID!) {
              runOrError(runId: $runId) { __typename ... on Run { status } ... on Error { message } }
            }""", {"runId": run_id})
        return _unwrap(data["runOrError"], "Run", f"run {run_id}")["status"]

    def step_statuses(self, run_id: str) -> dict[str, str | None]:
        """Step key -> SUCCESS, FAILURE, SKIPPED or IN_PROGRESS: which part of a run did what."""
        data = self.graphql("""
            query($runId: ID!) {
              runOrError(runId: $runId) {
                __typename ... on Run { stepStats { stepKey status } } ... on Error { message }
              }
            }""", {"runId": run_id})
        return {s["stepKey"]: s["status"] for s in _unwrap(data["runOrError"], "Run", f"run {run_id}")["stepStats"]}

    def step_errors(self, run_id: str, max_events: int = 10_000) -> dict[str, str]:
        """Step key -> error message of its failure, read from the run's event log (at most
        ``max_events`` events, paged): why a run failed, without opening the UI."""
        errors: dict[str, str] = {}
        cursor, seen = None, 0
        while seen < max_events:
            data = self.graphql("""
                query($runId: ID!, $cursor: String) {
                  logsForRun(runId: $runId, afterCursor: $cursor, limit: 1000) {
                    __typename
                    ... on EventConnection {
                      cursor hasMore
                      events { __typename ... on ExecutionStepFailureEvent { stepKey error { message } } }
                    }
                    ... on Error { message }
                  }
                }""", {"runId": run_id, "cursor": cursor})
            page = _unwrap(data["logsForRun"], "EventConnection", f"events of run {run_id}")
            for event in page["events"]:
                if event["__typename"] == "ExecutionStepFailureEvent":
                    errors[event["stepKey"]] = (event["error"] or {}).get("message", "")
            seen += len(page["events"])
            if not page["hasMore"] or not page["events"]:
                break
            cursor = page["cursor"]
        return errors

    def launch_job(self, job: str, partition: str | None = None, run_config: dict | None = None) -> str:
        """launchRun as the UI's Launch button does; a partition is the ``dagster/partition`` tag."""
        tags = [{"key": "dagster/partition", "value": partition}] if partition is not None else []
        data = self.graphql("""
            mutation($params: ExecutionParams!) {
              launchRun(executionParams: $params) {
                __typename
                ... on LaunchRunSuccess { run { runId } }
                ... on RunConfigValidationInvalid { errors { message } }
                ... on Error { message }
              }
            }""", {"params": {"selector": {**self.repository_selector(), "jobName": job},
                              "runConfigData": run_config or {}, "executionMetadata": {"tags": tags}}})
        return _unwrap(data["launchRun"], "LaunchRunSuccess", f"launching {job}")["run"]["runId"]

    def wait_for_run(self, run_id: str, timeout: float) -> str:
        """The run's terminal status (SUCCESS, FAILURE or CANCELED)."""
        return self.wait_for(lambda: (s if (s := self.run_status(run_id)) in TERMINAL_RUN_STATUSES else None),
                             timeout, f"run {run_id} to finish")
