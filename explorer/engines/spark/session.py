"""Setting Spark up for the ``spark`` engine: Java, the master, the session.

:func:`check_java` and :func:`probe_master` fail early with one line
(:class:`SparkSetupError`, a usage error for the CLI) instead of a JVM stack trace;
:func:`spark_session` starts a session the way the engine wants it (executors run this
interpreter with this project on their path).

Example
-------
>>> probe_master("local[2]")  # a local master is checked for its form, a spark:// one is reached
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from explorer.engines.base import EngineSetupError

__all__ = [
    "JAVA_MAJOR",
    "SessionStarter",
    "SparkSetupError",
    "check_java",
    "check_spark_conf",
    "probe_master",
    "spark_session",
    "start_session",
]

#: the minimum Java major version Spark 4 runs on
JAVA_MAJOR = 17


class SparkSetupError(EngineSetupError):
    """Spark cannot be used (no Java 17, unreachable master, no executor): one line.

    The CLI prints it as a usage error (exit code 2).
    """


def _java_command() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def check_java(timeout: float = 20.0) -> int:
    """Return the major version of the Java Spark would start, or raise SparkSetupError.

    Spark uses ``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is set, else ``java`` on
    ``PATH``; Spark 4 needs Java 17 or newer.

    >>> check_java() >= 17  # doctest: +SKIP
    True
    """
    java = _java_command()
    where = "JAVA_HOME" if os.environ.get("JAVA_HOME") else "PATH"
    if java is None or not os.path.exists(java):
        raise SparkSetupError(
            f"Java {JAVA_MAJOR} is needed for the spark engine, but no java was found on {where}"
        )
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SparkSetupError(
            f"Java {JAVA_MAJOR} is needed for the spark engine; {java} -version failed ({e})"
        ) from None
    text = out.stderr + out.stdout
    m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if m is None:
        raise SparkSetupError(
            f"Java {JAVA_MAJOR} is needed for the spark engine; cannot read the version of {java}"
        )
    major = int(m.group(1))
    if major == 1 and m.group(2):
        major = int(m.group(2))
    if major < JAVA_MAJOR:
        raise SparkSetupError(
            f"Java {JAVA_MAJOR} or newer is needed for the spark engine, found Java {major} at {java}"
        )
    return major


def probe_master(master: str, timeout: float = 10.0) -> None:
    """Check that a ``spark://host:port`` master accepts connections (else SparkSetupError).

    A ``local`` master is only checked for its form; ``yarn``, ``k8s://...`` and ``mesos://...``
    are not probed; any other form is refused before a JVM starts. A list of standby masters (``spark://h1:7077,h2:7077``)
    needs one that answers.

    >>> probe_master("local[2]")
    >>> probe_master("local[two]")
    Traceback (most recent call last):
    ...
    explorer.engines.spark.session.SparkSetupError: bad Spark master local[two]: expected local, local[N], local[*] or local[N,RETRIES]
    >>> probe_master("bogus://x")
    Traceback (most recent call last):
    ...
    explorer.engines.spark.session.SparkSetupError: bad Spark master bogus://x: expected local[N], spark://host:port, yarn, k8s://... or mesos://...
    >>> probe_master("spark://127.0.0.1:1", timeout=2)
    Traceback (most recent call last):
    ...
    explorer.engines.spark.session.SparkSetupError: cannot reach Spark master spark://127.0.0.1:1 (127.0.0.1:1: connection refused)
    """
    if master.startswith("local"):
        if not re.fullmatch(r"local(\[(\d+|\*)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]", master):
            raise SparkSetupError(
                f"bad Spark master {master}: expected local, local[N], local[*] or local[N,RETRIES]"
            )
        if any(int(n) == 0 for n in re.findall(r"\d+", master)):  # the JVM: "run locally with 0 threads"
            raise SparkSetupError(f"bad Spark master {master}: its counts must be 1 or more")
        return
    if master == "yarn" or master.startswith(("k8s://", "mesos://")):
        return  # a cluster manager Spark reaches on its own
    if not master.startswith("spark://"):
        raise SparkSetupError(
            f"bad Spark master {master}: expected local[N], spark://host:port, yarn, k8s://... or mesos://..."
        )
    errors = []
    for hostport in master[len("spark://") :].split(","):
        host, sep, port = hostport.rpartition(":")
        if not sep or not port.isdigit():
            raise SparkSetupError(f"bad Spark master {master}: expected spark://host:port")
        try:
            with socket.create_connection((host, int(port)), timeout=timeout):
                return
        except ConnectionRefusedError:
            errors.append(f"{hostport}: connection refused")
        except TimeoutError:
            errors.append(f"{hostport}: no answer within {timeout:g} s")
        except OSError as e:
            errors.append(f"{hostport}: {e.strerror or e}")
    raise SparkSetupError(f"cannot reach Spark master {master} ({'; '.join(errors)})")


#: settings whose value is a JVM size (``512m``, ``4g``, ``1024``: MiB when no unit)
_SIZE_KEYS = re.compile(r"spark\.(driver|executor)\.(memory|memoryOverhead|maxResultSize)")
_SIZE = re.compile(r"\d+(\.\d+)?\s*([kmgtp]i?b?|b)?", re.IGNORECASE)
#: settings whose value is a count of 1 or more (the JVM: NumberFormatException, or a
#: scheduler that never starts a task)
_COUNT_KEYS = re.compile(
    r"spark\.(executor\.(cores|instances)|driver\.cores|cores\.max|task\.(cpus|maxFailures)"
    r"|default\.parallelism|sql\.shuffle\.partitions)"
)
#: settings whose value is a duration (``120s``, ``2min``, ``500ms``; seconds when no unit)
_TIME_KEYS = re.compile(r"spark\.(network\.timeout|executor\.heartbeatInterval|rpc\.askTimeout)")
_TIME = re.compile(r"\d+\s*(us|ms|s|m|min|h|d)?", re.IGNORECASE)


def check_spark_conf(conf: dict[str, str]) -> None:
    """Check the settings that a JVM would otherwise reject with a stack trace of its own
    (memory sizes, counts, durations) or ignore (a key that is not a Spark setting, a master
    given here instead of ``--master``), naming the setting (else SparkSetupError).

    >>> check_spark_conf({"spark.driver.memory": "4g", "spark.executor.cores": "2"})
    >>> check_spark_conf({"spark.driver.memory": "lots"})
    Traceback (most recent call last):
    ...
    explorer.engines.spark.session.SparkSetupError: bad Spark setting spark.driver.memory=lots: expected a size such as 512m or 4g
    >>> check_spark_conf({"spark.executor.cores": "0"})
    Traceback (most recent call last):
    ...
    explorer.engines.spark.session.SparkSetupError: bad Spark setting spark.executor.cores=0: expected a whole number, 1 or more
    """
    for key, value in conf.items():
        text = str(value).strip()
        if not key.startswith("spark."):  # Spark would only log "Ignoring non-Spark config property"
            raise SparkSetupError(f"bad Spark setting {key}={value}: Spark settings start with 'spark.'")
        if key == "spark.master":  # the builder's master wins over it, silently
            raise SparkSetupError(f"bad Spark setting {key}={value}: give the master as --master {value}")
        if _SIZE_KEYS.fullmatch(key) and not _SIZE.fullmatch(text):
            raise SparkSetupError(f"bad Spark setting {key}={value}: expected a size such as 512m or 4g")
        if _COUNT_KEYS.fullmatch(key) and not (text.isdigit() and int(text) >= 1):
            raise SparkSetupError(f"bad Spark setting {key}={value}: expected a whole number, 1 or more")
        if _TIME_KEYS.fullmatch(key) and not _TIME.fullmatch(text):
            raise SparkSetupError(
                f"bad Spark setting {key}={value}: expected a duration such as 120s or 2min"
            )


def _executor_pythonpath(system: Any) -> str:
    paths: list[str] = [str(Path(__file__).resolve().parents[3]), os.getcwd()]
    mod = sys.modules.get(type(system).__module__)
    fname = getattr(mod, "__file__", None)
    if fname and mod is not None:
        root = Path(fname).resolve().parent
        for _ in range(mod.__name__.count(".")):
            root = root.parent
        paths.insert(0, str(root))
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p:
            paths.append(p)
    return os.pathsep.join(dict.fromkeys(paths))


def spark_session(
    master: str | None = "local[*]",
    *,
    app_name: str = "kafka-mc",
    conf: dict[str, str] | None = None,
    system: Any = None,
    executor_wait: float = 120.0,
) -> Any:
    """Start (or get) a SparkSession set up as the spark engine wants it.

    The UI and console progress are off, executors run this interpreter with this
    project (and ``system``'s package) on their path, old checkpoints are cleaned, and
    the log level is ERROR. For a ``spark://`` master it waits at most
    ``executor_wait`` seconds for a first executor (else SparkSetupError).
    ``master=None`` keeps the master given to ``spark-submit`` (or spark-defaults).

    >>> spark = spark_session("local[2]")  # doctest: +SKIP
    >>> check_spark(system, props, spark=spark)  # doctest: +SKIP
    """
    return start_session(master, app_name, dict(conf or {}), system, executor_wait)


def _local_defaults(master: str | None) -> dict[str, str]:
    """Driver memory and SQL shuffle partitions for a local master (never Spark's 200)."""
    if master is None:
        return {}
    m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", master)
    if m is None:
        return {}
    cores = os.cpu_count() or 1 if m.group(1) in (None, "*") else int(m.group(1))
    if m.group(1) is None:
        cores = 1
    return {"spark.driver.memory": "2g", "spark.sql.shuffle.partitions": str(cores)}


def start_session(
    master: str | None, app_name: str, conf: dict[str, str], system: Any, executor_wait: float
) -> Any:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.pyspark.python": sys.executable,
        "spark.executorEnv.PYTHONPATH": _executor_pythonpath(system),
        "spark.cleaner.referenceTracking.cleanCheckpoints": "true",
        "spark.network.timeout": "120s",
        **_local_defaults(master),
        **conf,
    }
    for k, v in settings.items():
        builder = builder.config(k, v)
    try:
        session = builder.getOrCreate()
    except Exception as e:  # the JVM did not start, or the master refused us
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SparkSetupError(f"cannot start Spark with master {master}: {first}") from None
    session.sparkContext.setLogLevel("ERROR")
    actual = str(session.sparkContext.master)
    if not actual.startswith("local"):
        deadline = time.monotonic() + executor_wait
        while session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() <= 1:
            if time.monotonic() > deadline:
                session.stop()
                raise SparkSetupError(
                    f"no Spark executor registered with {actual} within {executor_wait:g} s "
                    "(start a worker, or check that it has the cores and memory asked for)"
                )
            time.sleep(0.2)
    return session


class SessionStarter:
    """A Spark session started in a thread while the driver runs the first levels.

    Starting the JVM (seconds) then costs no search time: the driver keeps expanding
    levels itself until the session is up. :meth:`get` waits for it and raises what the
    start raised (:class:`SparkSetupError`, one line), in the caller's thread;
    :meth:`abandon` leaves it to stop itself once started (the search did not need it).

    >>> from explorer.engines.options import SparkOptions
    >>> starting = SessionStarter(SparkOptions(master="local[2]"), "kafka-mc", system)  # doctest: +SKIP
    >>> # the driver expands levels meanwhile; starting.ready() once the JVM is up
    >>> spark = starting.get()  # doctest: +SKIP
    """

    #: an abandoned start still under way: the next start waits for it (one SparkContext a process)
    _pending: SessionStarter | None = None
    thread: threading.Thread

    def __init__(self, o: Any, app_name: str, system: Any):
        before = SessionStarter._pending
        if before is not None:
            before.thread.join()
        self.session: Any = None
        self.error: BaseException | None = None
        self.abandoned = False
        self.lock = threading.Lock()
        args = (o.master, app_name, dict(o.spark_conf or {}), system, o.executor_wait)
        self.thread = threading.Thread(
            target=self._start, args=args, name="kafka-mc-spark-start", daemon=True
        )
        self.thread.start()

    def _start(self, *args: Any) -> None:
        try:
            session = start_session(*args)
        except BaseException as e:  # re-raised by get(), in the search's thread
            self.error = e
            return
        with self.lock:
            self.session = session
            if not self.abandoned:
                return
        with contextlib.suppress(Exception):
            session.stop()

    def ready(self) -> bool:
        return not self.thread.is_alive()

    def get(self) -> Any:
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.session

    def abandon(self) -> None:
        """The session is not needed: stop it now if it is up, else when it is."""
        with self.lock:
            self.abandoned = True
            session = self.session
        if session is not None:
            with contextlib.suppress(Exception):
                session.stop()
        elif self.thread.is_alive():
            SessionStarter._pending = self
