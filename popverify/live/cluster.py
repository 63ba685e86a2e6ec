"""A real RocketMQ NameServer, Broker and Proxy of one release on loopback.

The jars come from Maven Central through ``conformance/live/pom.xml`` (resolved once per
release into ``conformance/target/live-<release>/classpath.txt``, like the conformance
harness). Every JVM runs in its own process group (``start_new_session``) inside a temporary
folder (store, logs, configs), so stopping a component signals its whole group and nothing
outlives the run: ``Cluster.stop`` is called on normal exit, on error and from the SIGINT /
SIGTERM handlers the live command installs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable

import attrs

from popverify.tools import PROJECT_ROOT, ToolError, maven_lock, require_tool, run_child

LIVE_POM_DIR = PROJECT_ROOT / "conformance" / "live"
TARGET_DIR = PROJECT_ROOT / "conformance" / "target"
CLUSTER_NAME = "PopVerifyCluster"
BROKER_NAME = "broker-a"
# Heaps: three JVMs plus mqadmin runs must fit 2 shared cores and leave room for others.
HEAPS = {"namesrv": "256m", "broker": "512m", "proxy": "384m", "admin": "128m", "push": "128m"}
MAIN_CLASSES = {
    "namesrv": "org.apache.rocketmq.namesrv.NamesrvStartup",
    "broker": "org.apache.rocketmq.broker.BrokerStartup",
    "proxy": "org.apache.rocketmq.proxy.ProxyStartup",
    "admin": "org.apache.rocketmq.tools.command.MQAdminStartup",
}
# The line each component prints once it serves requests (NamesrvStartup#main0,
# BrokerStartup#start, ProxyStartup#main).
READY_TEXT = {"namesrv": "The Name Server boot success", "broker": "boot success",
              "proxy": "rocketmq-proxy startup successfully"}
START_TIMEOUT_S = 120.0
# The proxy's own broadcast topic (ProxyConfig#heartbeatSyncerTopicName's default), one queue
# (AbstractSystemMessageSyncer#getBroadcastTopicQueueNum).
HEARTBEAT_SYNCER_TOPIC = "DefaultHeartBeatSyncerTopic"
TOPIC_TRIES = 5
LOGBACK = """<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>%(log)s</file>
    <encoder><pattern>%%d{HH:mm:ss.SSS} %%-5level %%logger{0} - %%msg%%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
"""


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL this JVM when the popverify process dies, even by
    SIGKILL (Linux prctl PR_SET_PDEATHSIG), so no broker outlives its run."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # 1 == PR_SET_PDEATHSIG


def spawn_client(cmd: list[str], err_log: Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """A client process speaking JSON lines on stdin/stdout (POP consumer, push consumer JVM):
    its own session (so a SIGKILL of its group takes it whole), stderr appended to
    ``err_log``, dying with popverify."""
    with err_log.open("ab") as log:
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                cwd=cwd, start_new_session=True, preexec_fn=_die_with_parent, env=env, bufsize=1)


def _require(tool: str) -> str:
    return require_tool(tool, "live mode needs a JDK (java) and Maven (mvn)")


def classpath(release: str) -> str:
    """The classpath of namesrv, broker, proxy and tools of ``release``, resolving it with
    Maven the first time (a ToolError when Maven cannot)."""
    with maven_lock():
        return _classpath_locked(release)


def _classpath_locked(release: str) -> str:
    target = TARGET_DIR / f"live-{release}"
    cp_file = target / "classpath.txt"
    pom = LIVE_POM_DIR / "pom.xml"
    if not (cp_file.is_file() and cp_file.stat().st_mtime >= pom.stat().st_mtime):
        mvn = _require("mvn")
        target.mkdir(parents=True, exist_ok=True)
        proc = run_child([mvn, "-q", "-B", f"-Drocketmq.version={release}", "dependency:build-classpath",
                               f"-Dmdep.outputFile={cp_file}"], cwd=LIVE_POM_DIR)
        if proc.returncode != 0 or not cp_file.is_file():
            cp_file.unlink(missing_ok=True)
            raise ToolError(f"Maven could not resolve RocketMQ {release} (namesrv, broker, proxy, tools): "
                            f"{(proc.stdout + proc.stderr)[-600:]}")
    return cp_file.read_text().strip()


TLS_DIR = TARGET_DIR / "live-tls"


def tls_files() -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its PKCS#8 key, made once with openssl.

    5.0.0's proxy serves gRPC over TLS only (GrpcServerBuilder#configSslContext; later
    releases also accept plaintext). Its test mode makes a fresh self-signed certificate on
    every start, which the Python client cannot verify; with our own certificate the client
    trusts it through GRPC_DEFAULT_SSL_ROOTS_FILE_PATH.
    """
    cert, key = TLS_DIR / "cert.pem", TLS_DIR / "key.pem"
    if not (cert.is_file() and key.is_file()):
        openssl = shutil.which("openssl")
        if openssl is None:
            raise ToolError("openssl is not installed: RocketMQ 5.0.0's proxy needs a TLS certificate")
        TLS_DIR.mkdir(parents=True, exist_ok=True)
        proc = run_child([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                               "-out", str(cert), "-days", "3650", "-subj", "/CN=127.0.0.1",
                               "-addext", "subjectAltName=IP:127.0.0.1"])
        if proc.returncode != 0:
            raise ToolError(f"openssl could not make a certificate: {proc.stderr[-300:]}")
    return cert, key


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@attrs.frozen
class Ports:
    """Loopback ports of one cluster."""

    namesrv: int
    broker: int
    proxy_grpc: int
    proxy_remoting: int


@attrs.define
class Cluster:
    """One NameServer, one Broker and one Proxy (cluster mode) of ``release`` in ``workdir``."""

    release: str
    workdir: Path
    ports: Ports = attrs.Factory(lambda: Ports(free_port(), free_port(), free_port(), free_port()))
    procs: dict[str, subprocess.Popen[bytes]] = attrs.Factory(dict)
    paused: set[str] = attrs.Factory(set)
    starts: dict[str, int] = attrs.Factory(dict)
    start_seconds: dict[str, float] = attrs.Factory(dict)
    _cp: str = ""
    _java: str = ""

    @property
    def tls(self) -> bool:
        """Whether clients must speak TLS to this release's proxy (5.0.x: TLS only)."""
        return self.release.startswith("5.0.")

    @property
    def namesrv_addr(self) -> str:
        return f"127.0.0.1:{self.ports.namesrv}"

    @property
    def proxy_endpoint(self) -> str:
        return f"127.0.0.1:{self.ports.proxy_grpc}"

    def _write_configs(self) -> None:
        conf = self.workdir / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        # 5.0.0 reads $ROCKETMQ_HOME/conf/logback_<component>.xml (NamesrvStartup#createNamesrvController);
        # later releases carry their logback configuration inside the jars and ignore these.
        for name in ("namesrv", "broker", "proxy", "tools"):
            (conf / f"logback_{name}.xml").write_text(LOGBACK % {"log": self.workdir / "logs" / f"{name}.log"})
        (conf / "namesrv.properties").write_text(f"listenPort={self.ports.namesrv}\n")
        store = self.workdir / "store"
        (conf / "broker.properties").write_text("\n".join([
            f"brokerClusterName={CLUSTER_NAME}", f"brokerName={BROKER_NAME}", "brokerId=0",
            f"listenPort={self.ports.broker}", f"namesrvAddr={self.namesrv_addr}", "brokerIP1=127.0.0.1",
            f"storePathRootDir={store}", f"storePathCommitLog={store / 'commitlog'}",
            "autoCreateTopicEnable=false", "autoCreateSubscriptionGroup=true",
            # Small files: the default 1 GiB commit log and 300 MB consume queue files are too big
            # for a short run in a temporary folder.
            "mappedFileSizeCommitLog=67108864", "mappedFileSizeConsumeQueue=600000",
            "flushDiskType=ASYNC_FLUSH", "enablePropertyFilter=true", "",
        ]))
        proxy: dict[str, object] = {"rocketMQClusterName": CLUSTER_NAME, "namesrvAddr": self.namesrv_addr,
                                     "proxyMode": "cluster", "grpcServerPort": self.ports.proxy_grpc,
                                     "remotingListenPort": self.ports.proxy_remoting}
        if self.tls:
            cert, key = tls_files()
            proxy.update(grpcTlsTestModeEnable=False, grpcTlsCertPath=str(cert), grpcTlsKeyPath=str(key))
        (conf / "proxy.json").write_text(json.dumps(proxy) + "\n")

    def _command(self, component: str, extra: list[str]) -> list[str]:
        return self.java_command(component, self._cp, MAIN_CLASSES[component], extra)

    def java_command(self, heap_of: str, cp: str, main: str, extra: list[str]) -> list[str]:
        """A java command line with this cluster's JVM settings and HEAPS[heap_of]."""
        heap = HEAPS[heap_of]
        return [self._java, f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-XX:ActiveProcessorCount=2",
                # UtilAll#cleanBuffer reaches sun.nio.ch.DirectBuffer when the store recovers from
                # an abnormal shutdown (IndexFile#destroy); on JDK 17 a 5.0.0 broker restarted
                # after SIGKILL died with IllegalAccessError without these.
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
                "--add-opens", "java.base/java.nio=ALL-UNNAMED",
                f"-Duser.home={self.workdir}", f"-Drocketmq.home.dir={self.workdir}",
                "-Drocketmq.client.logUseSlf4j=false", "-Dcom.rocketmq.sendMessageWithVIPChannel=false",
                "-cp", cp, main, *extra]

    def classpath_text(self) -> str:
        """The release's classpath (resolved by ``start``)."""
        return self._cp

    def _env(self) -> dict[str, str]:
        # 5.0.0's ProxyStartup reads the home from the environment only.
        return dict(os.environ, ROCKETMQ_HOME=str(self.workdir))

    def _args(self, component: str) -> list[str]:
        conf = self.workdir / "conf"
        if component == "namesrv":
            return ["-c", str(conf / "namesrv.properties")]
        if component == "broker":
            return ["-c", str(conf / "broker.properties"), "-n", self.namesrv_addr]
        return ["-pc", str(conf / "proxy.json"), "-pm", "cluster", "-n", self.namesrv_addr]

    def _port(self, component: str) -> int:
        return {"namesrv": self.ports.namesrv, "broker": self.ports.broker, "proxy": self.ports.proxy_grpc}[component]

    def start(self) -> None:
        """Resolve the jars, write the configs and start namesrv, broker and proxy, waiting for
        each to serve (a ToolError when one does not within START_TIMEOUT_S)."""
        self._java = _require("java")
        self._cp = classpath(self.release)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._write_configs()
        self.start_component("namesrv")
        self.start_component("broker")
        # ProxyStartup exits when its HeartbeatSyncer cannot create this topic: 5.5.0's
        # DefaultAdminService#createTopicOnBroker gives the broker 3 s and then checks the route
        # three times without a pause, and createTopicOnTopicBrokerIfNotExist gives up at once
        # when the broker has not registered with the NameServer yet (a failed CI run: "proxy exited
        # with 1 at start", AbstractSystemMessageSyncer#start:144). Created here first and routed,
        # the proxy finds it and creates nothing.
        self.create_topic(HEARTBEAT_SYNCER_TOPIC, 1)
        self.start_component("proxy")

    def start_component(self, component: str) -> None:
        """Start (or restart) one component and wait until it serves."""
        out = self.workdir / f"{component}.out"
        # The .out file is appended to across restarts: only what this start writes counts (the
        # first start's "boot success" made a restarted broker look ready as soon as its port
        # opened, although it never finished starting).
        seen = out.stat().st_size if out.is_file() else 0
        log = out.open("ab")
        began = time.monotonic()
        proc = subprocess.Popen(self._command(component, self._args(component)), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=self.workdir, start_new_session=True,
                                env=self._env(), preexec_fn=_die_with_parent)
        log.close()
        self.procs[component] = proc
        self.starts[component] = self.starts.get(component, 0) + 1
        deadline = began + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                tail = out.read_text(errors="replace")[-600:]
                raise ToolError(f"RocketMQ {self.release} {component} exited with {proc.returncode} at start: {tail}")
            with out.open("rb") as f:
                f.seek(seen)
                fresh = f.read().decode(errors="replace")
            if READY_TEXT[component] in fresh and _port_open(self._port(component)):
                break
            time.sleep(0.2)
        else:
            raise ToolError(f"RocketMQ {self.release} {component} did not start within {START_TIMEOUT_S:.0f} s "
                            f"(see {out})")
        self.start_seconds.setdefault(component, time.monotonic() - began)

    def run_admin(self, *args: str, timeout: float = 90.0) -> str:
        """Run one mqadmin subcommand (RocketMQ's MQAdminStartup) against this cluster."""
        cmd = self._command("admin", [*args, "-n", self.namesrv_addr])
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.workdir,
                                  start_new_session=True, check=False, env=self._env(),
                                  preexec_fn=_die_with_parent)
        except subprocess.TimeoutExpired as err:
            raise ToolError(f"mqadmin {args[0]} did not finish within {timeout:.0f} s") from err
        if proc.returncode != 0 or "Exception" in proc.stdout:
            raise ToolError(f"mqadmin {args[0]} failed: {(proc.stdout + proc.stderr)[-600:]}")
        return proc.stdout

    def create_topic(self, topic: str, queues: int,
                     on_retry: Callable[[dict[str, object], str | None], None] | None = None) -> None:
        """mqadmin updateTopic -c CLUSTER, until the NameServer routes the topic.

        updateTopic -c asks the NameServer for the cluster's masters and creates the topic on each:
        when the broker has not registered yet (it prints "boot success" first), that is no broker,
        and mqadmin exits 0 having created nothing (seen on a loaded machine: every send then failed
        with "No topic route info"). So the route is checked with mqadmin topicRoute and the
        creation repeated, at most TOPIC_TRIES times; ``on_retry`` hears of each failed try."""
        for attempt in range(1, TOPIC_TRIES + 1):
            self.run_admin("updateTopic", "-c", CLUSTER_NAME, "-t", topic, "-r", str(queues), "-w", str(queues))
            try:
                route = self.run_admin("topicRoute", "-t", topic)
            except ToolError as err:
                if on_retry is not None:
                    on_retry({"topic": topic, "topic_route": "missing", "attempt": attempt}, str(err)[-200:])
                time.sleep(3)
                continue
            if '"brokerDatas"' in route and "127.0.0.1" in route:
                return
            if on_retry is not None:
                on_retry({"topic": topic, "topic_route": "empty", "attempt": attempt}, None)
            time.sleep(3)
        raise ToolError(f"mqadmin could not create {topic} on the broker ({TOPIC_TRIES} tries): "
                        "no route in the NameServer")

    def signal(self, component: str, sig: int) -> None:
        """Send ``sig`` to the component's process group."""
        proc = self.procs[component]
        if proc.poll() is None:
            os.killpg(proc.pid, sig)

    def kill(self, component: str) -> None:
        """SIGKILL the component and reap it."""
        self.resume(component)
        self.signal(component, signal.SIGKILL)
        self.procs[component].wait(timeout=30)

    def pause(self, component: str) -> None:
        self.signal(component, signal.SIGSTOP)
        self.paused.add(component)

    def resume(self, component: str) -> None:
        if component in self.paused:
            self.signal(component, signal.SIGCONT)
            self.paused.discard(component)

    def restart(self, component: str, hard: bool) -> None:
        """Kill (SIGKILL when ``hard``, else SIGTERM with its shutdown hook) and start again."""
        if hard:
            self.kill(component)
        else:
            self.resume(component)
            self.signal(component, signal.SIGTERM)
            try:
                self.procs[component].wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill(component)
        self.start_component(component)

    def pids(self) -> list[int]:
        """Process ids of the components still running."""
        return [p.pid for p in self.procs.values() if p.poll() is None]

    def stop(self) -> None:
        """Stop every component: the proxy by SIGKILL (it holds no data, and its graceful gRPC
        shutdown waits ~30 s), broker and namesrv by SIGTERM; SIGKILL what is left after 15 s."""
        for component in ("proxy", "broker", "namesrv"):
            proc = self.procs.get(component)
            if proc is None or proc.poll() is not None:
                continue
            try:
                if component in self.paused:
                    os.killpg(proc.pid, signal.SIGCONT)
                os.killpg(proc.pid, signal.SIGKILL if component == "proxy" else signal.SIGTERM)
            except ProcessLookupError:
                continue
        self.paused.clear()
        deadline = time.monotonic() + 15
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=10)
