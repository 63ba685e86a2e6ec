package popverify.lockstep;

import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.stream.Stream;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.processor.LockstepAccess;
import org.apache.rocketmq.broker.processor.PopBufferMergeService;
import org.apache.rocketmq.broker.processor.PopReviveService;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.KeyBuilder;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.netty.NettyRequestProcessor;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.store.GetMessageResult;
import org.apache.rocketmq.store.MessageStore;
import org.apache.rocketmq.store.PutMessageResult;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.timer.TimerMessageStore;

/**
 * popverify's lockstep harness: RocketMQ's real broker classes (the release on the classpath)
 * driven in-process, one JSON request per stdin line, one JSON answer per stdout line. The
 * protocol is spec/conformance.md "Lockstep protocol". Virtual time comes from the TimeAgent;
 * background services are stepped by requests (see the spec for each deviation from a running
 * broker).
 */
public final class Lockstep {
    static final String TOPIC = "TopicTest";
    static final String GROUP = "GID_popverify";
    private static final int POP_MESSAGE = 200050;
    private static final int ACK_MESSAGE = 200051;
    private static final int CHANGE_MESSAGE_INVISIBLETIME = 200053;
    private static final int BATCH_ACK_MESSAGE = 200151;
    /** Longest gap, in virtual ms, between two service runs while time passes (pop_driver.SERVICE_SLICE). */
    private static final long SERVICE_SLICE = 100;
    private static final long SETTLE_TIMEOUT_MS = 20_000;

    private final String version;
    private Broker broker;

    private Lockstep(String version) {
        this.version = version;
    }

    public static void main(String[] args) throws Exception {
        // RocketMQ's loggers and anything else would write to stdout; the protocol owns it.
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(System.err);
        String v = MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION).replace("V", "").replace('_', '.');
        Lockstep h = new Lockstep(v);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        try {
            while ((line = in.readLine()) != null) {
                if (line.isEmpty()) {
                    continue;
                }
                JSONObject answer = new JSONObject(true);
                boolean close = false;
                try {
                    JSONObject req = JSON.parseObject(line);
                    close = "close".equals(req.getString("op"));
                    answer.put("ok", h.handle(req));
                } catch (Throwable e) {
                    answer.put("error", describe(e));
                }
                // null fields are written (fastjson drops them by default): `code: null` means something
                out.println(JSON.toJSONString(answer, com.alibaba.fastjson.serializer.SerializerFeature.WriteMapNullValue));
                if (close) {
                    break;
                }
            }
        } finally {
            if (h.broker != null) {
                h.broker.discard();
            }
        }
        out.flush();
        System.exit(0);
    }

    static String describe(Throwable e) {
        Throwable c = e;
        while (c instanceof InvocationTargetException && c.getCause() != null) {
            c = c.getCause();
        }
        return c.getClass().getSimpleName() + ": " + c.getMessage();
    }

    Object handle(JSONObject req) throws Throwable {
        String op = req.getString("op");
        if (op == null) {
            throw new IllegalArgumentException("request without op");
        }
        if ("init".equals(op)) {
            return init(req);
        }
        if ("jvm".equals(op)) {
            JSONObject o = threads();
            o.put("lastCloseMs", lastCloseMs);
            o.put("lastCreateMs", lastCreateMs);
            return o;
        }
        if ("version".equals(op)) {
            JSONObject o = new JSONObject(true);
            o.put("version", version);
            return o;
        }
        if ("close".equals(op)) {
            if (broker != null) {
                broker.discard();  // the JVM exits next: no graceful shutdown needed
                broker = null;
            }
            return new JSONObject();
        }
        if (broker == null) {
            throw new IllegalStateException("no broker: send init first");
        }
        if ("reset".equals(op)) {
            return reset(req);
        }
        if ("restart".equals(op)) {
            broker = broker.restart();
            broker.enqueueTimer();
            return new JSONObject();
        }
        Object answer = "pop".equals(op) ? broker.pop(req) : broker.simple(op, req);
        broker.enqueueTimer();
        JSONArray woken = broker.runWoken();
        if (!woken.isEmpty() && answer instanceof JSONObject) {
            ((JSONObject) answer).put("woken", woken);
        }
        return answer;
    }

    /** `jvm`: the JVM's live threads by name (digits folded to '#'), with counts (a re-`init`
     * or `reset` must leave the same set behind as the one before it). */
    static JSONObject threads() {
        TreeMap<String, Integer> names = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive()) {
                names.merge(t.getName().replaceAll("[0-9]+", "#"), 1, Integer::sum);
            }
        }
        JSONObject o = new JSONObject(true);
        o.put("count", names.values().stream().mapToInt(Integer::intValue).sum());
        o.put("names", new JSONObject(new java.util.LinkedHashMap<>(names)));
        return o;
    }

    /** Wall-clock cost of the last `init`/`reset` (old broker shut down; new one built), for
     * the `jvm` op only: never part of an answer that is compared. */
    private long lastCloseMs;
    private long lastCreateMs;

    /** The last `init` request: `reset` starts a fresh broker with its fields. */
    private JSONObject lastInit;

    /** A fresh broker in this JVM with the last `init`'s settings (fields given here replace
     * them): the old one is shut down and its store folder deleted, a new BrokerController is
     * built on a new folder, exactly as `init` does; only the JVM (its loaded, rewritten classes)
     * is kept. Answers as `init`. */
    private JSONObject reset(JSONObject req) throws Exception {
        if (lastInit == null) {
            throw new IllegalStateException("no broker: send init first");
        }
        JSONObject merged = new JSONObject(true);
        merged.putAll(lastInit);
        for (Map.Entry<String, Object> e : req.entrySet()) {
            if (!"op".equals(e.getKey())) {
                merged.put(e.getKey(), e.getValue());
            }
        }
        merged.put("op", "init");
        return init(merged);
    }

    private JSONObject init(JSONObject req) throws Exception {
        String want = req.getString("version");
        if (want != null && !want.equals(version)) {
            throw new IllegalArgumentException("this harness runs RocketMQ " + version + ", not " + want);
        }
        Settings s = new Settings(req);  // a bad request leaves the running broker alone
        long t0 = System.nanoTime();
        if (broker != null) {
            broker.close();
            broker = null;
        }
        long t1 = System.nanoTime();
        broker = Broker.create(version, s, null);
        PutRefusal.clear();
        LongPollOps.clear();
        lastInit = req;
        long t2 = System.nanoTime();
        JSONObject o = new JSONObject(true);
        o.put("version", version);
        o.put("now", VirtualClock.get());
        o.put("reviveTopic", broker.reviveTopic);
        o.put("retryTopic", KeyBuilder.buildPopRetryTopic(TOPIC, GROUP));
        o.put("brokerName", s.brokerName);
        lastCloseMs = (t1 - t0) / 1_000_000;
        lastCreateMs = (t2 - t1) / 1_000_000;
        return o;
    }

    static int bounded(JSONObject req, String key, int def, int lo, int hi) {
        Integer v = req.getInteger(key);
        int x = v == null ? def : v;
        if (x < lo || x > hi) {
            throw new IllegalArgumentException(key + " must be in " + lo + ".." + hi + ", got " + x);
        }
        return x;
    }

    static long boundedLong(JSONObject req, String key, long def, long lo, long hi) {
        Long v = req.getLong(key);
        long x = v == null ? def : v;
        if (x < lo || x > hi) {
            throw new IllegalArgumentException(key + " must be in " + lo + ".." + hi + ", got " + x);
        }
        return x;
    }

    static String required(JSONObject req, String key) {
        String v = req.getString(key);
        if (v == null) {
            throw new IllegalArgumentException("missing field " + key);
        }
        return v;
    }

    /** The init request's knobs (the model's BrokerConfig fields). */
    static final class Settings {
        final int queues;
        final long now;
        final long seed;
        final String brokerName;
        final int reviveQueueNum;
        final boolean enablePopBufferMerge;
        final int popCkStayBufferTime;
        final int popCkStayBufferTimeOut;
        final long reviveInterval;
        final long reviveScanTime;
        final int popPollingSize;
        final int maxPopPollingSize;
        final List<String> brokerOptions;

        Settings(JSONObject req) {
            queues = bounded(req, "queues", 4, 1, 1024);
            now = boundedLong(req, "now", 1_700_000_000_000L, 1_000_000_000_000L, 4_000_000_000_000L);
            seed = req.getLongValue("seed");
            brokerName = req.getString("brokerName") == null ? "broker-a" : req.getString("brokerName");
            reviveQueueNum = bounded(req, "reviveQueueNum", 8, 1, 64);
            enablePopBufferMerge = req.getBooleanValue("enablePopBufferMerge");
            popCkStayBufferTime = bounded(req, "popCkStayBufferTime", 10_000, 0, 3_600_000);
            popCkStayBufferTimeOut = bounded(req, "popCkStayBufferTimeOut", 3_000, 0, 3_600_000);
            reviveInterval = boundedLong(req, "reviveInterval", 1000, 1, 3_600_000);
            reviveScanTime = boundedLong(req, "reviveScanTime", 10_000, 1, 3_600_000);
            // the long-polling limits (ScenarioConfig.pop_polling_size / max_pop_polling_size)
            popPollingSize = bounded(req, "popPollingSize", 1024, 0, 1024);
            maxPopPollingSize = bounded(req, "maxPopPollingSize", 100_000, 0, 100_000);
            brokerOptions = BrokerOptions.parse(req);
        }
    }

    /** One broker instance over one store folder. */
    static final class Broker {
        final String version;
        final Settings settings;
        final Path dir;
        final BrokerController controller;
        final MessageStore store;
        final TimerMessageStore timer;
        final String reviveTopic;
        final EmbeddedChannel channel;
        final ChannelHandlerContext ctx;
        final QueuedExecutor woken;
        /** When the merge thread's timed work is due (started with the broker, as the model's). */
        ServiceLoops.MergeSchedule mergeSchedule;

        private Broker(String version, Settings settings, Path dir, BrokerController controller, MessageStore store,
                       TimerMessageStore timer, QueuedExecutor woken) {
            this.woken = woken;
            this.version = version;
            this.settings = settings;
            this.dir = dir;
            this.controller = controller;
            this.store = store;
            this.timer = timer;
            this.reviveTopic = org.apache.rocketmq.common.PopAckConstants.buildClusterReviveTopic(
                controller.getBrokerConfig().getBrokerClusterName());
            this.channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
            this.ctx = channel.pipeline().firstContext();
        }

        /** A broker on ``reuse`` (a restart) or on a fresh temporary folder. */
        static Broker create(String version, Settings s, Path reuse) throws Exception {
            VirtualClock.set(s.now);
            Path dir = reuse != null ? reuse : Files.createTempDirectory(storeBase(), "popverify-lockstep-");
            BrokerConfig bc = new BrokerConfig();
            bc.setBrokerName(s.brokerName);
            bc.setReviveQueueNum(s.reviveQueueNum);
            bc.setEnablePopBufferMerge(s.enablePopBufferMerge);
            bc.setPopCkStayBufferTime(s.popCkStayBufferTime);
            bc.setPopCkStayBufferTimeOut(s.popCkStayBufferTimeOut);
            bc.setReviveInterval(s.reviveInterval);
            bc.setReviveScanTime(s.reviveScanTime);
            bc.setPopPollingSize(s.popPollingSize);
            bc.setMaxPopPollingSize(s.maxPopPollingSize);
            BrokerOptions.apply(bc, s.brokerOptions);
            MessageStoreConfig msc = new MessageStoreConfig();
            msc.setStorePathRootDir(dir.toString());
            msc.setStorePathCommitLog(dir.resolve("commitlog").toString());
            // (the mapped file sizes are Setup#build's)
            msc.setMappedFileSizeConsumeQueue(30_000 * 20);
            msc.setTimerWheelEnable(true);
            // HAService would listen on 10912 (BrokerStartup sets listenPort + 1); an ephemeral
            // port lets several harness JVMs run side by side. Nothing connects to it.
            msc.setHaListenPort(0);
            // One timer get thread and one put thread: deliveries of one slot reach the store in
            // one order (the defaults, 3 + 3 threads, may reorder them between runs).
            msc.setTimerGetMessageThreadNum(1);
            msc.setTimerPutMessageThreadNum(1);
            // The timer runs only inside `timer` requests (see Broker#timer).
            msc.setTimerStopEnqueue(true);
            Reflect.set(msc, "timerStopDequeue", true);  // no setter in either release
            NettyServerConfig nsc = new NettyServerConfig();
            nsc.setListenPort(0);
            long tc = System.nanoTime();
            BrokerController c = new BrokerController(bc, nsc, new NettyClientConfig(), msc);
            OrderLockTimer.install(c);  // 5.5.0's lock-free timer off the wall clock
            QueuedExecutor woken = new QueuedExecutor();
            c.setPullMessageExecutor(woken);
            System.err.printf("lockstep: controller built in %d ms%n", (System.nanoTime() - tc) / 1_000_000);
            MessageStore store;
            TimerMessageStore timer;
            long t0 = System.nanoTime();
            store = Setup.build(c, msc, version, s.now);
            System.err.printf("lockstep: store built in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
            timer = c.getTimerMessageStore();
            Broker b = new Broker(version, s, dir, c, store, timer, woken);
            long t1 = System.nanoTime();
            store.start();
            RetentionOps.quietCleaners(store);  // retention only on request (RetentionOps)
            b.takeOverReput();
            // TimerFlushService is not started: every timerFlushIntervalMs (1 s of wall-clock
            // time, a period no schedule controls) it writes the timer to disk, comparing its
            // 38 MB wheel byte by byte -- a share of a core per JVM, and a shutdown joins it.
            // What it writes only matters to a restart, and TimerMessageStore#shutdown writes
            // the checkpoint and the timer log itself; recovery (#recover → recoverAndRevise)
            // rebuilds the wheel's slots from the timer log. `started` set makes #start skip it
            // (ServiceThread#start), cleared again so that #shutdown skips it too.
            java.util.concurrent.atomic.AtomicBoolean flushStarted = (java.util.concurrent.atomic.AtomicBoolean)
                Reflect.get(Reflect.get(timer, "timerFlushService"), "started");
            flushStarted.set(true);
            timer.start();
            flushStarted.set(false);
            // BrokerController#changeSpecialServiceStatus(true) on a master.
            timer.setShouldRunningDequeue(true);
            System.err.printf("lockstep: store started in %d ms%n", (System.nanoTime() - t1) / 1_000_000);
            b.createTopic();
            // The consumers' first heartbeat creates their group (ClientManageProcessor#heartBeat,
            // 5.0.0:103, 5.5.0:109: findSubscriptionGroupConfig auto-creates it), as the model's
            // world does at start: an admin's reset before the first POP finds the group.
            c.getSubscriptionGroupManager().findSubscriptionGroupConfig(GROUP);
            // PopMessageProcessor's random (queue start, retry-first) follows the seed.
            Field rf = c.getPopMessageProcessor().getClass().getDeclaredField("random");
            rf.setAccessible(true);
            Reflect.setFinal(c.getPopMessageProcessor(), rf, new Random(s.seed));
            // The merge thread's first idle pass switches `serving` on (PopBufferMergeService#run);
            // a broker that has been up for more than a few ms is in that state.
            Reflect.set(c.getPopMessageProcessor().getPopBufferMergeService(), "serving", true);
            b.mergeSchedule = new ServiceLoops.MergeSchedule(s.now);
            // BrokerController#start: PopReviveService#run waits until then (disappearTimeAfterStart, -1 by default)
            Reflect.set(c, "shouldStartTime", s.now + msc.getDisappearTimeAfterStart());
            ServiceLoops.startRevive(c.getAckMessageProcessor(), b.reviveServices());
            b.settleStore();
            return b;
        }

        /** Where store folders go: the folder the client names in -Dpopverify.lockstep.dir (it
         * removes it when the JVM ends, however it ends), else the JVM's temp folder. */
        static Path storeBase() throws java.io.IOException {
            String d = System.getProperty("popverify.lockstep.dir");
            Path base = d == null || d.isEmpty() ? Path.of(System.getProperty("java.io.tmpdir")) : Path.of(d);
            Files.createDirectories(base);
            return base;
        }

        private void createTopic() {
            TopicConfig tc = new TopicConfig(TOPIC, settings.queues, settings.queues, 6);
            controller.getTopicConfigManager().updateTopicConfig(tc);
        }

        Broker restart() throws Exception {
            long now = VirtualClock.get();
            // The timer checkpoint saved at shutdown takes commitQueueOffset, which the
            // enqueue-put thread sets to the queue's end on its next idle 10 ms poll after a
            // batch (until then it is the last message's offset, and recovery would enqueue
            // that message again). A broker at rest has done that poll: wait for it.
            long max = store.getMaxOffsetInQueue(TimerMessageStore.TIMER_TOPIC, 0);
            long deadline = System.nanoTime() + SETTLE_TIMEOUT_MS * 1_000_000L;
            while (timer.getCommitQueueOffset() < max) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("timer commit offset did not reach the queue end");
                }
                Thread.sleep(1);
            }
            shutdown();
            Settings s = settings;
            Broker b = create(version, new Settings(withNow(s, now)), dir);
            return b;
        }

        private static JSONObject withNow(Settings s, long now) {
            JSONObject o = new JSONObject();
            o.put("queues", s.queues);
            o.put("now", now);
            o.put("seed", s.seed);
            o.put("brokerName", s.brokerName);
            o.put("reviveQueueNum", s.reviveQueueNum);
            o.put("enablePopBufferMerge", s.enablePopBufferMerge);
            o.put("popCkStayBufferTime", s.popCkStayBufferTime);
            o.put("popCkStayBufferTimeOut", s.popCkStayBufferTimeOut);
            o.put("reviveInterval", s.reviveInterval);
            o.put("reviveScanTime", s.reviveScanTime);
            o.put("popPollingSize", s.popPollingSize);
            o.put("maxPopPollingSize", s.maxPopPollingSize);
            o.put("brokerOptions", s.brokerOptions);
            return o;
        }

        private void shutdown() throws Exception {
            // the remoting server's channels close first, then the long-polling loop's tail runs
            channel.close();
            LongPollOps.shutdownTail(controller.getPopMessageProcessor());
            // BrokerController#shutdown stops the merge and revive threads first (never started
            // here: ServiceThread#shutdown / #stop return at once; a pass never runs a loop's tail;
            // the revive loops' exit runs in ServiceLoops#stopRevive)
            controller.getPopMessageProcessor().getPopBufferMergeService().shutdown();
            controller.getAckMessageProcessor().shutdownPopReviveService();
            ServiceLoops.stopRevive(reviveServices());
            stopTimerThreadsTogether();
            try {
                timer.shutdown();
            } catch (Throwable ignored) {
                // best effort: a half-built broker is torn down anyway
            }
            try {
                store.shutdown();
            } catch (Throwable ignored) {
                // as above
            }
            // 5.5.0: DefaultMessageStore's constructor opens a MessageRocksDBStorage whose
            // scheduler (a 5-minute WAL flush) MessageRocksDBStorage#shutdown never stops
            try {
                Object rocks = Reflect.get(store, "messageRocksDBStorage");
                if (rocks != null) {
                    stopExecutors(rocks);
                }
            } catch (NoSuchFieldException e) {
                // 5.0.0 has no RocksDB storage in the store
            } catch (Throwable ignored) {
                // as above
            }
            stopControllerParts();
            channel.close();
        }

        /** TimerMessageStore#shutdown stops its service threads one after the other, each join
         * waiting out that thread's poll (10-1000 ms) or a wheel flush in progress; told to stop
         * (ServiceThread#makeStop + #wakeup, what shutdown does first) all at once, they end
         * side by side, and the shutdown that follows only joins them. */
        private void stopTimerThreadsTogether() {
            for (Class<?> c = timer.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                        continue;
                    }
                    try {
                        f.setAccessible(true);
                        Object v = f.get(timer);
                        Object[] services = v instanceof Object[] ? (Object[]) v : new Object[] {v};
                        for (Object svc : services) {
                            if (svc instanceof org.apache.rocketmq.common.ServiceThread) {
                                ((org.apache.rocketmq.common.ServiceThread) svc).makeStop();
                                ((org.apache.rocketmq.common.ServiceThread) svc).wakeup();
                            }
                        }
                    } catch (Throwable ignored) {
                        // not accessible: left to TimerMessageStore#shutdown
                    }
                }
            }
        }

        /** Classes whose instances BrokerController's constructor starts threads in
         * (BrokerOuterAPI: its NettyRemotingClient's "ClientHouseKeepingService" timer). */
        private static final java.util.Set<String> THREADED_PARTS = new java.util.HashSet<>(java.util.Arrays.asList(
            "BrokerStatsManager", "LmqBrokerStatsManager", "ScheduleMessageService", "DefaultConsumerIdsChangeListener",
            "ClientHousekeepingService", "PopLongPollingService", "NotificationProcessor", "StatisticsManager",
            "BrokerOuterAPI",
            // 5.5.0 BrokerController#shutdown:1758 (its lock manager's timer: OrderLockTimer here)
            "QueueLevelConsumerManager"));

        /** Shuts down every ExecutorService and java.util.Timer held in a field of ``owner`` (its
         * own class and superclasses): for parts that start a thread and offer no way to stop it. */
        private static void stopExecutors(Object owner) {
            for (Class<?> c = owner.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                        continue;
                    }
                    try {
                        f.setAccessible(true);
                        Object v = f.get(owner);
                        if (v instanceof java.util.concurrent.ExecutorService) {
                            ((java.util.concurrent.ExecutorService) v).shutdownNow();
                        } else if (v instanceof java.util.Timer) {
                            ((java.util.Timer) v).cancel();
                        }
                    } catch (Throwable ignored) {
                        // not accessible: nothing of ours to stop
                    }
                }
            }
        }

        /** BrokerController's constructor starts threads in a few of its parts (BrokerStatsManager,
         * ScheduleMessageService persist, consumer-ids listener, client housekeeping, notification
         * polling); BrokerController#shutdown would stop them but assumes a started broker. Those
         * parts (and such parts of its processors) are stopped one by one; without this every
         * `init` leaks about 7 threads. Only the listed classes: store-side parts (e.g. the timer
         * checkpoint) are already closed and must not be touched again (a second unmap crashes). */
        private void stopControllerParts() {
            stopParts(controller, BrokerController.class, 1);
        }

        private void stopParts(Object owner, Class<?> type, int depth) {
            for (Field f : type.getDeclaredFields()) {
                if (java.lang.reflect.Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
                    continue;
                }
                Object part;
                try {
                    f.setAccessible(true);
                    part = f.get(owner);
                } catch (Throwable e) {
                    continue;  // not accessible: not one of ours to stop
                }
                if (part == null) {
                    continue;
                }
                String name = part.getClass().getSimpleName();
                if (THREADED_PARTS.contains(name)) {
                    try {
                        part.getClass().getMethod("shutdown").invoke(part);
                    } catch (NoSuchMethodException e) {
                        // 5.0.0's StatisticsManager starts its cleaner in the constructor and has
                        // no shutdown (BrokerStatsManager#shutdown leaves it): stop its executors
                        stopExecutors(part);
                    } catch (Throwable ignored) {
                        // a part that cannot stop while unstarted has no thread running
                    }
                }
                if (depth > 0 && (name.endsWith("Processor") || name.endsWith("StatsManager"))) {
                    stopParts(part, part.getClass(), depth - 1);
                }
            }
        }

        void close() throws Exception {
            shutdown();
            deleteTree(dir);
        }

        /** Removes the store folder without stopping the services (the JVM is about to exit). */
        void discard() {
            deleteTree(dir);
        }

        private static void deleteTree(Path dir) {
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            } catch (Exception ignored) {
                // a temp folder left behind is harmless
            }
        }

        private Object reput;
        private Method doReput;

        /** Stops DefaultMessageStore's ReputMessageService thread (its loop is `sleep 1 ms;
         * doReput()`) and keeps the service, so that {@link #settleStore} runs doReput() on the
         * harness thread: dispatch happens exactly when the harness says, without polling. */
        void takeOverReput() throws Exception {
            reput = Reflect.get(store, "reputMessageService");
            reput.getClass().getMethod("makeStop").invoke(reput);
            Thread t = (Thread) Reflect.get(reput, "thread");
            t.join(SETTLE_TIMEOUT_MS);
            if (t.isAlive()) {
                throw new IllegalStateException("ReputMessageService did not stop");
            }
            doReput = reput.getClass().getDeclaredMethod("doReput");
            doReput.setAccessible(true);
        }

        /** Reput/dispatch caught up: everything written to the commit log is in its consume
         * queue (ReputMessageService#doReput on this thread until dispatchBehindBytes() == 0). */
        void settleStore() throws Exception {
            long deadline = System.nanoTime() + SETTLE_TIMEOUT_MS * 1_000_000L;
            doReput.invoke(reput);
            while (store.dispatchBehindBytes() != 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("reput did not catch up");
                }
                Thread.sleep(0, 100_000);
                doReput.invoke(reput);
            }
        }

        // -- requests ---------------------------------------------------------------------

        Object simple(String op, JSONObject req) throws Throwable {
            switch (op) {
                case "put":
                    return put(req);
                case "ack":
                    return ack(req);
                case "batchAck":
                    return batchAck(req);
                case "batchAckBody": return BatchAckBodyOps.send(this, req);
                case "changeInvisibleTime":
                    return changeInvisibleTime(req);
                case "advance":
                    return advance(req);
                case "setTime":
                    return setTime(req);
                case "scan":
                    scan();
                    return new JSONObject();
                case "timer": {
                    JSONObject o = new JSONObject(true);
                    o.put("fired", timer());
                    return o;
                }
                case "revive":
                    return revive(req);
                case "flush":
                    controller.getConsumerOffsetManager().persist();
                    return new JSONObject();
                case "persistOrderInfo":
                    return OrderInfoOps.persist(controller);
                case "state":
                    return state();
                case "refusePuts":
                    return PutRefusal.arm(req);
                case "refuseRetryPuts":
                    return PutRefusal.armRetry(req);
                case "refuseProcessorPuts":
                    return PutRefusal.armProcessor(req);
                case "flushTimeouts":
                    return PutRefusal.armFlushTimeout(req);
                case "scanStall":
                    return ScanStall.run(req, this::scan, controller.getPopMessageProcessor().getPopBufferMergeService());
                case "mergeShutdown": return MergeShutdown.run(controller, this::settleStore);
                case "settle":
                    settleStore();
                    return new JSONObject();
                case "rollCommitLog": case "deleteCommitLogFiles": case "cleanConsumeQueues": case "deleteTopic": case "createTopic": return RetentionOps.handle(this, op, req);
                case "queryAssignment": return QueryAssignmentOps.query(this, req);
                case "setMessageRequestMode": return QueryAssignmentOps.setRequestMode(this, req);
                case "deferWoken": case "runWoken": case "pollingTimeout": case "closeChannel": return LongPollOps.handle(this, op, req);
                case "cleanQueueLocks": return QueueLockOps.clean(this);
                case "startQueues": return StartOffsetOps.start(this, req);
                case "deleteGroup": case "resetOffset": case "createGroup": return AdminGroupOps.handle(this, op, req);
                case "writeOnlyTopic": case "disableGroup": return AdminPermOps.handle(this, op, req);
                case "fireOrderLockTimers": return OrderLockTimer.fire(this);
                case "heartbeat": case "unregister": case "pull": case "pullHeld": case "queryOffset": case "updateOffset": case "consumerList": case "minOffset": case "maxOffset": case "searchOffset": case "pushState": case "lockBatch": case "unlockBatch": case "sendBack": case "scheduleStep": return PullOps.handle(this, op, req);
                default:
                    throw new IllegalArgumentException("unknown op " + op);
            }
        }

        JSONObject put(JSONObject req) throws Exception {
            String topic = req.getString("topic") == null ? TOPIC : req.getString("topic");
            int queueId = bounded(req, "queueId", -1, 0, 1023);
            String uniq = required(req, "uniqKey");
            String body = req.getString("body") == null ? "xxxxxxxxxxxxxxxx" : req.getString("body");
            MessageExtBrokerInner msg = new MessageExtBrokerInner();
            msg.setTopic(topic);
            msg.setQueueId(queueId);
            // SendMessageProcessor#sendMessage stores request.getBody(), which RemotingCommand#decode
            // leaves null for an empty body (produce_sized's size 0): the store's hook refuses it
            msg.setBody(body.isEmpty() ? null : body.getBytes(StandardCharsets.UTF_8));
            String tags = req.getString("tags");
            if (tags != null) {
                msg.setTags(tags);
            }
            JSONObject props = req.getJSONObject("properties");
            if (props != null) {  // produce_sized: a user property of any length
                for (String k : props.keySet()) {
                    org.apache.rocketmq.common.message.MessageAccessor.putProperty(msg, k, props.getString(k));
                }
            }
            org.apache.rocketmq.common.message.MessageAccessor.putProperty(msg, MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, uniq);
            msg.setPropertiesString(MessageDecoder.messageProperties2String(msg.getProperties()));
            msg.setTagsCode(tags == null ? 0 : tags.hashCode());
            msg.setBornTimestamp(VirtualClock.get());
            msg.setBornHost(new InetSocketAddress("127.0.0.1", 10911));
            msg.setStoreHost(new InetSocketAddress("127.0.0.1", 10911));
            PutMessageResult r = store.putMessage(msg);
            settleStore();
            JSONObject o = new JSONObject(true);
            o.put("status", r.getPutMessageStatus().name());
            o.put("queueOffset", r.getAppendMessageResult() == null ? -1 : r.getAppendMessageResult().getLogicsOffset());
            o.put("storeTimestamp", r.getAppendMessageResult() == null ? 0 : r.getAppendMessageResult().getStoreTimestamp());
            return o;
        }

        /** A processor answer: the returned command, or the one written to the channel (5.5.0's
         * asynchronous replies), or null when nothing was answered (parked in long polling). */
        RemotingCommand call(NettyRequestProcessor p, RemotingCommand request) throws Exception {
            RemotingCommand response = p.processRequest(ctx, request);
            Object written = channel.readOutbound();
            if (response == null && written instanceof RemotingCommand) {
                response = (RemotingCommand) written;
            }
            settleStore();
            return response;
        }

        /** Request ids of this broker: 1, 2, ... (RemotingCommand's own counter is JVM-wide). */
        private int nextOpaque = 1;

        RemotingCommand request(int code, Map<String, String> fields) {
            RemotingCommand r = RemotingCommand.createRequestCommand(code, null);
            r.setOpaque(nextOpaque++);
            for (Map.Entry<String, String> e : fields.entrySet()) {
                if (e.getValue() != null) {
                    r.addExtField(e.getKey(), e.getValue());
                }
            }
            return r;
        }

        static Map<String, String> header(RemotingCommand response) throws Exception {
            response.makeCustomHeaderToNet();
            Map<String, String> f = response.getExtFields();
            return f == null ? new HashMap<>() : f;
        }

        JSONObject pop(JSONObject req) throws Throwable {
            String topic = req.getString("topic") == null ? TOPIC : req.getString("topic");
            String group = req.getString("group") == null ? GROUP : req.getString("group");
            Map<String, String> f = new TreeMap<>();
            f.put("consumerGroup", group);
            f.put("topic", topic);
            // the request domain (spec/broker.md "Request validation"): any Java int / long
            f.put("queueId", String.valueOf(bounded(req, "queueId", -1, Integer.MIN_VALUE, Integer.MAX_VALUE)));
            f.put("maxMsgNums", String.valueOf(bounded(req, "maxMsgNums", 32, Integer.MIN_VALUE, Integer.MAX_VALUE)));
            f.put("invisibleTime", String.valueOf(boundedLong(req, "invisibleTime", 60_000, Long.MIN_VALUE, Long.MAX_VALUE)));
            f.put("pollTime", String.valueOf(boundedLong(req, "pollTime", 0, 0, 86_400_000L)));
            f.put("bornTime", String.valueOf(req.getLong("bornTime") == null ? VirtualClock.get() : req.getLong("bornTime")));
            f.put("initMode", String.valueOf(bounded(req, "initMode", 0, 0, 1)));
            // a filter of pop_shape (popverify/sim/pop_shapes.py); every other POP subscribes to all
            if (!Boolean.TRUE.equals(req.getBoolean("noExp"))) {
                f.put("expType", req.getString("expType") == null ? "TAG" : req.getString("expType"));
                f.put("exp", req.getString("exp") == null ? "*" : req.getString("exp"));
            }
            // orderly POP (ConsumeMessagePopOrderlyService pops with order=true)
            f.put("order", String.valueOf(Boolean.TRUE.equals(req.getBoolean("order"))));
            Interleave il = new Interleave(req.getJSONArray("interleave"), this);
            RemotingCommand request = request(POP_MESSAGE, f);
            RemotingCommand response;
            Hooks.install(il);
            try {
                response = call(controller.getPopMessageProcessor(), request);
            } finally {
                Hooks.uninstall();
            }
            JSONObject o = popAnswer(response, request);
            il.report(o);
            return o;
        }

        /** A POP answer; `opaque` identifies the request (a parked one is answered later in
         * `woken` with the same opaque). */
        JSONObject popAnswer(RemotingCommand response, RemotingCommand request) throws Exception {
            JSONObject o = new JSONObject(true);
            if (response == null) {
                o.put("code", null);
                o.put("parked", true);
                o.put("opaque", request.getOpaque());
                o.put("messages", new JSONArray());
                return o;
            }
            Map<String, String> hd = header(response);
            o.put("code", response.getCode());
            o.put("remark", response.getRemark());
            o.put("popTime", longOf(hd.get("popTime")));
            o.put("invisibleTime", longOf(hd.get("invisibleTime")));
            o.put("reviveQid", longOf(hd.get("reviveQid")));
            o.put("restNum", longOf(hd.get("restNum")));
            o.put("startOffsetInfo", hd.get("startOffsetInfo"));
            o.put("msgOffsetInfo", hd.get("msgOffsetInfo"));
            o.put("orderCountInfo", hd.get("orderCountInfo"));
            o.put("parked", false);
            o.put("opaque", request == null ? response.getOpaque() : request.getOpaque());
            o.put("messages", popMessages(response, hd));
            return o;
        }

        /** Runs the long-polling POPs woken during the last request (QueuedExecutor) and returns
         * their answers, read from the channel. */
        JSONArray runWoken() throws Exception {
            JSONArray answers = new JSONArray();
            for (Runnable task = woken.next(); task != null; task = woken.next()) {
                task.run();
                settleStore();
                enqueueTimer();
                for (Object out = channel.readOutbound(); out != null; out = channel.readOutbound()) {
                    if (out instanceof RemotingCommand) {
                        answers.add(popAnswer((RemotingCommand) out, null));
                    }
                }
            }
            return answers;
        }

        private static Long longOf(String s) {
            return s == null ? null : Long.valueOf(s);
        }

        /** The delivered messages with the receipt handle MQClientAPIImpl#processPopResponse builds. */
        JSONArray popMessages(RemotingCommand response, Map<String, String> hd) throws Exception {
            JSONArray arr = new JSONArray();
            if (response.getCode() != 0 || response.getBody() == null) {
                return arr;
            }
            List<MessageExt> msgs = MessageDecoder.decodes(ByteBuffer.wrap(response.getBody()));
            Map<?, ?> startInfo = (Map<?, ?>) ExtraInfo.call("parseStartOffsetInfo", hd.get("startOffsetInfo"));
            Map<?, ?> msgInfo = (Map<?, ?>) ExtraInfo.call("parseMsgOffsetInfo", hd.get("msgOffsetInfo"));
            Map<String, List<Long>> sortMap = new HashMap<>();
            for (MessageExt m : msgs) {
                if (m.getProperty(MessageConst.PROPERTY_POP_CK) == null) {
                    sortMap.computeIfAbsent(ExtraInfo.mapKey(m.getTopic(), m.getQueueId()), k -> new ArrayList<>()).add(m.getQueueOffset());
                }
            }
            long popTime = Long.parseLong(hd.get("popTime"));
            long invisible = Long.parseLong(hd.get("invisibleTime"));
            int reviveQid = Integer.parseInt(hd.get("reviveQid"));
            for (MessageExt m : msgs) {
                // 5.5.0 re-encodes a retried message with the normal topic and its handle in
                // PROPERTY_POP_CK (PopMessageProcessor#popMsgFromQueue); the client keeps it.
                String handle = m.getProperty(MessageConst.PROPERTY_POP_CK);
                String key = ExtraInfo.mapKey(m.getTopic(), m.getQueueId());
                if (handle == null && (msgInfo == null || !msgInfo.containsKey(key)
                    || sortMap.get(key).indexOf(m.getQueueOffset()) >= ((List<?>) msgInfo.get(key)).size())) {
                    // the client finds no msgOffsetInfo entry for the message and throws (the
                    // model's empty handle): 5.0.0 orderly after a restart (update threw, no
                    // offset info), or a position-0 read that decoded another queue's message
                    // (its queue not in the header, or more of its messages than offsets there)
                    handle = "";
                } else if (handle == null) {
                    int index = sortMap.get(key).indexOf(m.getQueueOffset());
                    long msgQueueOffset = ((Number) ((List<?>) msgInfo.get(key)).get(index)).longValue();
                    long start = ((Number) startInfo.get(key)).longValue();
                    handle = ExtraInfo.build8(start, popTime, invisible, reviveQid, m.getTopic(), settings.brokerName,
                        m.getQueueId(), msgQueueOffset);
                }
                JSONObject e = new JSONObject(true);
                e.put("topic", m.getTopic());
                e.put("queueId", m.getQueueId());
                e.put("queueOffset", m.getQueueOffset());
                e.put("uniqKey", m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX));
                e.put("reconsumeTimes", m.getReconsumeTimes());
                e.put("realTopic", handle.isEmpty() ? m.getTopic() : ExtraInfo.realTopic(handle, TOPIC, GROUP));
                e.put("extraInfo", handle);
                // MessageDecoder leaves an empty body (produce_sized's size 0) null
                e.put("body", m.getBody() == null ? "" : new String(m.getBody(), StandardCharsets.UTF_8));
                arr.add(e);
            }
            return arr;
        }

        JSONObject ack(JSONObject req) throws Exception {
            Map<String, String> f = new TreeMap<>();
            f.put("consumerGroup", req.getString("group") == null ? GROUP : req.getString("group"));
            f.put("topic", required(req, "topic"));
            f.put("queueId", String.valueOf(bounded(req, "queueId", -1, Integer.MIN_VALUE, Integer.MAX_VALUE)));
            f.put("offset", String.valueOf(boundedLong(req, "offset", -1, Long.MIN_VALUE, Long.MAX_VALUE)));
            f.put("extraInfo", required(req, "extraInfo"));
            RemotingCommand response = call(controller.getAckMessageProcessor(), request(ACK_MESSAGE, f));
            JSONObject o = new JSONObject(true);
            o.put("code", response == null ? null : response.getCode());
            o.put("remark", response == null ? null : response.getRemark());
            return o;
        }

        JSONObject batchAck(JSONObject req) throws Exception {
            if (version.startsWith("5.0.")) {
                throw new UnsupportedOperationException("RocketMQ " + version + " has no BATCH_ACK_MESSAGE");
            }
            String group = req.getString("group") == null ? GROUP : req.getString("group");
            JSONArray entries = req.getJSONArray("entries");
            if (entries == null) {
                throw new IllegalArgumentException("missing field entries");
            }
            RemotingCommand request = request(BATCH_ACK_MESSAGE, new TreeMap<>());
            String topic = req.getString("topic") == null ? TOPIC : req.getString("topic");
            request.setBody(BatchAckBody.encode(group, topic, entries));
            RemotingCommand response = call(controller.getAckMessageProcessor(), request);
            JSONObject o = new JSONObject(true);
            Integer code = response == null ? null : response.getCode();
            o.put("code", code);
            o.put("remark", response == null ? null : response.getRemark());
            JSONArray codes = new JSONArray();
            for (int i = 0; i < entries.size(); i++) {
                codes.add(code);
            }
            o.put("codes", codes);
            return o;
        }

        JSONObject changeInvisibleTime(JSONObject req) throws Exception {
            Map<String, String> f = new TreeMap<>();
            String topic = required(req, "topic");
            int queueId = bounded(req, "queueId", -1, Integer.MIN_VALUE, Integer.MAX_VALUE);
            long offset = boundedLong(req, "offset", -1, Long.MIN_VALUE, Long.MAX_VALUE);
            f.put("consumerGroup", req.getString("group") == null ? GROUP : req.getString("group"));
            f.put("topic", topic);
            f.put("queueId", String.valueOf(queueId));
            f.put("offset", String.valueOf(offset));
            f.put("extraInfo", required(req, "extraInfo"));
            f.put("invisibleTime", String.valueOf(boundedLong(req, "invisibleTime", -1, Long.MIN_VALUE, Long.MAX_VALUE)));
            RemotingCommand response = call(controller.getChangeInvisibleTimeProcessor(), request(CHANGE_MESSAGE_INVISIBLETIME, f));
            JSONObject o = new JSONObject(true);
            if (response == null) {
                o.put("code", null);
                return o;
            }
            Map<String, String> hd = header(response);
            o.put("code", response.getCode());
            o.put("remark", response.getRemark());
            o.put("popTime", longOf(hd.get("popTime")));
            o.put("invisibleTime", longOf(hd.get("invisibleTime")));
            o.put("reviveQid", longOf(hd.get("reviveQid")));
            String handle = null;
            if (response.getCode() == 0) {
                // MQClientAPIImpl#changeInvisibleTimeAsync: 7-field handle of the request's offset + " " + offset
                handle = ExtraInfo.build7(offset, Long.parseLong(hd.get("popTime")), Long.parseLong(hd.get("invisibleTime")),
                    Integer.parseInt(hd.get("reviveQid")), topic, settings.brokerName, queueId) + MessageConst.KEY_SEPARATOR + offset;
            }
            o.put("extraInfo", handle);
            return o;
        }

        JSONObject advance(JSONObject req) throws Throwable {
            long ms = boundedLong(req, "ms", -1, 0, 86_400_000L);
            boolean services = req.getBooleanValue("servicesOnPeriod");
            if (!services) {
                VirtualClock.set(VirtualClock.get() + ms);
            } else {
                // pop_driver._pass_time: in slices of at most SERVICE_SLICE ms, scan then timer.
                while (ms > 0) {
                    long chunk = Math.min(ms, SERVICE_SLICE);
                    VirtualClock.set(VirtualClock.get() + chunk);
                    ms -= chunk;
                    scan();
                    timer();
                }
            }
            JSONObject o = new JSONObject(true);
            o.put("now", VirtualClock.get());
            return o;
        }

        JSONObject setTime(JSONObject req) {
            VirtualClock.set(boundedLong(req, "now", -1, 1_000_000_000_000L, 4_000_000_000_000L));
            JSONObject o = new JSONObject(true);
            o.put("now", VirtualClock.get());
            return o;
        }

        /** One pass of PopBufferMergeService#run's loop (ServiceLoops), without its wait: scan()
         * (which ends with scanCommitOffset), scanGarbage() when its pass count is due (read as
         * time: ServiceLoops.MergeSchedule), and the `serving` switch. The thread runs whether or
         * not buffer merge is enabled (BrokerController#start starts it unconditionally; with
         * merge off it only commits the just-offset CKs). */
        void scan() throws Throwable {
            PopBufferMergeService svc = controller.getPopMessageProcessor().getPopBufferMergeService();
            int countOfSecond30 = (Integer) Reflect.get(svc, "countOfSecond30");
            int countOfMinute1 = (Integer) Reflect.get(svc, "countOfMinute1");
            Reflect.set(svc, "scanTimes", mergeSchedule.scanTimesBefore(VirtualClock.get(), countOfSecond30, countOfMinute1));
            ServiceLoops.pass(svc);
            settleStore();
        }

        /** TimerMessageStore's enqueue side, run after every request: in a running broker the
         * enqueue threads pick a timer message up within milliseconds of its put, so it goes
         * into the wheel (its deliver time is still ahead) and never takes the "already
         * expired" shortcut to the put queue that a late enqueue would take (which would race
         * the dequeue thread and reorder deliveries). Enqueue is released only here, dequeue
         * only in {@link #timer}. */
        void enqueueTimer() throws Exception {
            settleStore();
            long max = store.getMaxOffsetInQueue(TimerMessageStore.TIMER_TOPIC, 0);
            long todo = max - timer.getQueueOffset();
            if (todo <= 0) {
                return;
            }
            long timing0 = timer.getTimerMetrics().getTimingCount(reviveTopic);
            MessageStoreConfig msc = controller.getMessageStoreConfig();
            msc.setTimerStopEnqueue(false);
            try {
                wake("enqueueGetService");
                long deadline = System.nanoTime() + SETTLE_TIMEOUT_MS * 1_000_000L;
                while (!enqueueDone(max, todo, timing0)) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("timer enqueue did not catch up");
                    }
                    Thread.sleep(0, 100_000);
                }
            } finally {
                msc.setTimerStopEnqueue(true);
            }
        }

        /** The timer queue is read up to ``max`` and every request is written to the wheel:
         * TimerMessageStore#doEnqueue's last step counts the message in TimerMetrics (dequeue,
         * which would count it down, is stopped). A request that took the expired shortcut is
         * not counted; then the put thread's next empty poll (commitQueueOffset = max, after
         * its latch waited for the put) is the sign. commitQueueOffset alone cannot tell: its
         * value before the batch may already be max - 1. */
        private boolean enqueueDone(long max, long todo, long timing0) throws Exception {
            if (timer.getQueueOffset() < max || !((BlockingQueue<?>) Reflect.get(timer, "enqueuePutQueue")).isEmpty()) {
                return false;
            }
            return timer.getTimerMetrics().getTimingCount(reviveTopic) - timing0 >= todo
                || timer.getCommitQueueOffset() >= max && ((BlockingQueue<?>) Reflect.get(timer, "dequeuePutQueue")).isEmpty();
        }

        /** The timer's dequeue side at the current virtual time, until every delivery due is in
         * the store: the write time is moved to now (what TimerEnqueuePutService does on its next
         * 10 ms poll), dequeue is released and the threads run until quiet. */
        int timer() throws Exception {
            MessageStoreConfig msc = controller.getMessageStoreConfig();
            enqueueTimer();
            long before = reviveTotal();
            Reflect.invoke(timer, "maybeMoveWriteTime");
            if (timerQuiet()) {
                // the read time is at the write time: dequeue() would return -1
                return 0;
            }
            Reflect.set(msc, "timerStopDequeue", false);
            try {
                wake("dequeueGetService");
                waitTimerQuiet();
            } finally {
                Reflect.set(msc, "timerStopDequeue", true);
            }
            settleStore();
            return (int) (reviveTotal() - before);
        }

        private long reviveTotal() throws Exception {
            long n = 0;
            for (int q = 0; q < settings.reviveQueueNum; q++) {
                n += store.getMaxOffsetInQueue(reviveTopic, q);
            }
            return n;
        }

        private void wake(String service) throws Exception {
            Object svc = Reflect.get(timer, service);
            svc.getClass().getMethod("wakeup").invoke(svc);
        }

        /** Quiet: enqueue has read the whole timer queue and committed it, the read time is at
         * the write time (= now rounded down to the precision), and no delivery is in flight;
         * it must hold on three polls in a row. */
        private void waitTimerQuiet() throws Exception {
            long deadline = System.nanoTime() + SETTLE_TIMEOUT_MS * 1_000_000L;
            int precision = timer.getPrecisionMs();
            long target = VirtualClock.get() / precision * precision;
            int quiet = 0;
            while (quiet < 3) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("timer did not settle: read " + timer.getCurrReadTimeMs() + " target " + target);
                }
                Thread.sleep(0, 200_000);
                settleStore();
                boolean ok = timerQuiet() && (Long) Reflect.get(timer, "currWriteTimeMs") >= target;
                quiet = ok ? quiet + 1 : 0;
                if (!ok) {
                    wake("dequeueGetService");
                }
            }
        }

        /** The timer has nothing to do at its write time: the whole timer queue is enqueued and
         * committed, no request is queued between its threads, and reading has reached writing. */
        private boolean timerQuiet() throws Exception {
            long maxTimerQ = store.getMaxOffsetInQueue(TimerMessageStore.TIMER_TOPIC, 0);
            long writeTime = (Long) Reflect.get(timer, "currWriteTimeMs");
            return timer.getQueueOffset() >= maxTimerQ && timer.getCommitQueueOffset() >= maxTimerQ - 1
                && ((BlockingQueue<?>) Reflect.get(timer, "enqueuePutQueue")).isEmpty()
                && ((BlockingQueue<?>) Reflect.get(timer, "dequeueGetQueue")).isEmpty()
                && ((BlockingQueue<?>) Reflect.get(timer, "dequeuePutQueue")).isEmpty()
                && timer.getCurrReadTimeMs() >= writeTime;
        }

        JSONObject revive(JSONObject req) throws Throwable {
            int qid = bounded(req, "qid", -1, 0, settings.reviveQueueNum - 1);
            PopReviveService svc = reviveServices()[qid];
            String retry = KeyBuilder.buildPopRetryTopic(TOPIC, GROUP);
            long[] retryBefore = new long[retryQueues(retry)];
            for (int q = 0; q < retryBefore.length; q++) {
                retryBefore[q] = store.getMaxOffsetInQueue(retry, q);
            }
            // one pass of PopReviveService#run (ServiceLoops): its checks, the round, its back-off
            ServiceLoops.pass(svc);
            long[] r = LockstepAccess.takeRound();
            if (r == null) {
                r = new long[] {-1, -1, -1};  // the pass skipped the round
            }
            settleStore();
            JSONObject o = new JSONObject(true);
            o.put("oldOffset", r[0]);
            o.put("reviveOffset", controller.getConsumerOffsetManager().queryOffset("CID_RMQ_SYS_REVIVE_GROUP", reviveTopic, qid));
            o.put("endTime", r[2]);
            JSONArray revived = new JSONArray();
            // every retry queue: useSeparateRetryQueue (5.5.0) may have created more in this pass
            for (int q = 0; q < retryQueues(retry); q++) {
                long retryAfter = store.getMaxOffsetInQueue(retry, q);
                for (long off = q < retryBefore.length ? retryBefore[q] : 0; off < retryAfter; off++) {
                    MessageExt m = readOne(retry, q, off);
                    if (m == null) {
                        continue;
                    }
                    JSONObject e = new JSONObject(true);
                    e.put("retryOffset", off);
                    e.put("retryQueue", q);
                    e.put("uniqKey", m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX));
                    e.put("reconsumeTimes", m.getReconsumeTimes());
                    revived.add(e);
                }
            }
            o.put("revived", revived);
            return o;
        }

        /** The retry topic's queue count: PopAckConstants.retryQueueNum (1) until a revive creates it. */
        private int retryQueues(String retry) {
            TopicConfig tc = controller.getTopicConfigManager().selectTopicConfig(retry);
            return tc == null ? 1 : tc.getReadQueueNums();
        }

        PopReviveService[] reviveServices() throws Exception {
            return (PopReviveService[]) Reflect.get(controller.getAckMessageProcessor(), "popReviveServices");
        }

        MessageExt readOne(String topic, int queueId, long offset) {
            GetMessageResult r = store.getMessage("popverify-lockstep-reader", topic, queueId, offset, 1, null);
            if (r == null) {
                return null;
            }
            try {
                if (r.getMessageBufferList().isEmpty()) {
                    return null;
                }
                // getMessage skips units whose commit-log data retention removed and reads the next
                // one: only the unit at `offset` itself is what this reader reports
                MessageExt m = MessageDecoder.decode(r.getMessageBufferList().get(0), true, false);
                return m != null && m.getQueueOffset() == offset ? m : null;
            } finally {
                r.release();
            }
        }

        List<MessageExt> readAll(String topic, int queueId) throws Exception {
            List<MessageExt> list = new ArrayList<>();
            long min = store.getMinOffsetInQueue(topic, queueId);
            long max = store.getMaxOffsetInQueue(topic, queueId);
            for (long off = Math.max(min, 0); off < max; off++) {
                MessageExt m = readOne(topic, queueId, off);
                if (m != null) {
                    list.add(m);
                }
            }
            return list;
        }

        JSONObject state() throws Exception {
            JSONObject o = new JSONObject(true);
            o.put("now", VirtualClock.get());
            JSONObject offsets = new JSONObject(true);
            Map<String, ? extends Map<Integer, Long>> table = controller.getConsumerOffsetManager().getOffsetTable();
            for (String key : new java.util.TreeSet<>(table.keySet())) {
                JSONObject q = new JSONObject(true);
                for (Map.Entry<Integer, Long> e : new TreeMap<>(table.get(key)).entrySet()) {
                    q.put(String.valueOf(e.getKey()), e.getValue());
                }
                offsets.put(key, q);
            }
            o.put("offsets", offsets);
            String retry = KeyBuilder.buildPopRetryTopic(TOPIC, GROUP);
            JSONObject topics = new JSONObject(true);
            topics.put(TOPIC, ranges(TOPIC, settings.queues));
            topics.put(retry, ranges(retry, retryQueues(retry)));
            topics.put(reviveTopic, ranges(reviveTopic, settings.reviveQueueNum));
            o.put("topics", topics);
            JSONObject reviveOffsets = new JSONObject(true);
            for (int q = 0; q < settings.reviveQueueNum; q++) {
                reviveOffsets.put(String.valueOf(q), controller.getConsumerOffsetManager().queryOffset("CID_RMQ_SYS_REVIVE_GROUP", reviveTopic, q));
            }
            o.put("reviveOffsets", reviveOffsets);
            JSONArray retryMsgs = new JSONArray();
            for (int q = 0; q < retryQueues(retry); q++) {
                for (MessageExt m : readAll(retry, q)) {
                    JSONObject e = new JSONObject(true);
                    e.put("queueId", m.getQueueId());
                    e.put("queueOffset", m.getQueueOffset());
                    e.put("uniqKey", m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX));
                    e.put("reconsumeTimes", m.getReconsumeTimes());
                    retryMsgs.add(e);
                }
            }
            o.put("retry", retryMsgs);
            JSONArray revive = new JSONArray();
            for (int q = 0; q < settings.reviveQueueNum; q++) {
                for (MessageExt m : readAll(reviveTopic, q)) {
                    revive.add(reviveEntry(m, false));
                }
            }
            o.put("revive", revive);
            o.put("timer", timerPending());
            // (the write time and commit offset are left out: the enqueue-put thread moves them on
            // its own 10 ms polls, so they are not a function of the requests; so are the
            // TimerMetrics counts after a restart, persisted on the flush thread's period)
            JSONObject ti = new JSONObject(true);
            ti.put("readTime", timer.getCurrReadTimeMs());
            ti.put("queueOffset", timer.getQueueOffset());
            ti.put("timerQueueMax", store.getMaxOffsetInQueue(TimerMessageStore.TIMER_TOPIC, 0));
            // what PopReviveService#consumeReviveMessage reads as timerDelay (getReadBehind on
            // 5.0.0, getDequeueBehind later) and commitLogDelay (getEnqueueBehind)
            ti.put("readBehind", firstLong(timer, "getReadBehind", "getDequeueBehind"));
            ti.put("enqueueBehind", firstLong(timer, "getEnqueueBehind"));
            o.put("timerStore", ti);
            o.put("buffer", buffer());
            o.put("putRefusals", PutRefusal.state());
            return o;
        }

        /** The first of the named no-argument methods the release has, called. */
        private static long firstLong(Object target, String... names) throws Exception {
            for (String name : names) {
                try {
                    return ((Number) target.getClass().getMethod(name).invoke(target)).longValue();
                } catch (NoSuchMethodException e) {
                    // the other release's name
                }
            }
            throw new NoSuchMethodException(String.join(" | ", names));
        }

        private JSONArray ranges(String topic, int queues) throws Exception {
            JSONArray arr = new JSONArray();
            for (int q = 0; q < queues; q++) {
                JSONObject e = new JSONObject(true);
                e.put("queueId", q);
                e.put("min", store.getMinOffsetInQueue(topic, q));
                e.put("max", store.getMaxOffsetInQueue(topic, q));
                arr.add(e);
            }
            return arr;
        }

        private JSONObject reviveEntry(MessageExt m, boolean inTimer) {
            JSONObject e = new JSONObject(true);
            String tags = m.getTags();
            String raw = new String(m.getBody(), StandardCharsets.UTF_8);
            e.put("queueId", inTimer ? Integer.valueOf(m.getProperty(MessageConst.PROPERTY_REAL_QUEUE_ID)) : m.getQueueId());
            e.put("queueOffset", inTimer ? null : m.getQueueOffset());
            e.put("tags", tags);
            // PopAckConstants CK_TAG "ck", ACK_TAG "ack", BATCH_ACK_TAG "bAck" (5.1+)
            e.put("kind", "ck".equals(tags) ? "ck" : "ack".equals(tags) ? "ack" : "bAck".equals(tags) ? "batchAck" : tags);
            e.put("body", jsonOrRaw(raw));
            // the property itself: 5.0.0's Message#getDeliverTimeMs throws without it (a producer's
            // message in the revive topic, revive6); 5.5.0's answers 0, as here
            String deliver = m.getProperty(MessageConst.PROPERTY_TIMER_DELIVER_MS);
            e.put("deliverTime", deliver == null ? 0L : Long.parseLong(deliver));
            return e;
        }

        /** A revive-queue body as JSON, else as the text it is: at commit-log position 0, after
         * retention deleted its file, a read answers the first message of the oldest file left
         * (F11), whatever its body (v5.0 corpus seed 116 of 26 November 2026). */
        private static Object jsonOrRaw(String raw) {
            try {
                return JSON.parseObject(raw);
            } catch (com.alibaba.fastjson.JSONException e) {
                return raw;
            }
        }

        /** CK/ACK messages still held by the timer: the timer topic's messages not yet delivered
         * (those whose TIMER_OUT_MS is after the timer's read time). */
        private JSONArray timerPending() throws Exception {
            JSONArray arr = new JSONArray();
            long read = timer.getCurrReadTimeMs();
            for (MessageExt m : readAll(TimerMessageStore.TIMER_TOPIC, 0)) {
                String out = m.getProperty(MessageConst.PROPERTY_TIMER_OUT_MS);
                if (out != null && Long.parseLong(out) >= read
                    && reviveTopic.equals(m.getProperty(MessageConst.PROPERTY_REAL_TOPIC))) {
                    JSONObject e = reviveEntry(m, true);
                    e.put("deliverTime", Long.parseLong(out));
                    arr.add(e);
                }
            }
            return arr;
        }

        private JSONArray buffer() {
            JSONArray arr = new JSONArray();
            PopBufferMergeService svc = controller.getPopMessageProcessor().getPopBufferMergeService();
            Map<String, PopBufferMergeService.PopCheckPointWrapper> buf;
            try {
                @SuppressWarnings("unchecked")
                Map<String, PopBufferMergeService.PopCheckPointWrapper> b =
                    (Map<String, PopBufferMergeService.PopCheckPointWrapper>) Reflect.get(svc, "buffer");
                buf = b;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            for (String key : new java.util.TreeSet<>(buf.keySet())) {
                PopBufferMergeService.PopCheckPointWrapper w = buf.get(key);
                JSONObject e = new JSONObject(true);
                e.put("mergeKey", w.getMergeKey());
                e.put("ck", JSON.parseObject(JSON.toJSONString(w.getCk())));
                e.put("bits", w.getBits().get());
                e.put("toStoreBits", w.getToStoreBits().get());
                e.put("ckStored", w.isCkStored());
                e.put("reviveQueueId", w.getReviveQueueId());
                e.put("reviveQueueOffset", w.getReviveQueueOffset());
                arr.add(e);
            }
            return arr;
        }
    }

    /** `pop.interleave`: ops run at PopMessageProcessor's popTime read (at 0) or after its k-th
     * popMsgFromQueue (at k; Hooks), with the clock moved first. */
    static final class Interleave implements Hooks.Listener {
        private final JSONArray entries;
        private final Broker broker;
        private final JSONArray done = new JSONArray();
        private final boolean[] fired;

        Interleave(JSONArray entries, Broker broker) {
            this.entries = entries == null ? new JSONArray() : entries;
            this.broker = broker;
            this.fired = new boolean[this.entries.size()];
            for (int i = 0; i < this.entries.size(); i++) {
                JSONObject e = this.entries.getJSONObject(i);
                bounded(e, "at", -1, 0, 1024);
                for (Object op : e.getJSONArray("ops") == null ? new JSONArray() : e.getJSONArray("ops")) {
                    String name = ((JSONObject) op).getString("op");
                    if (name == null || "pop".equals(name) || "init".equals(name) || "restart".equals(name) || "close".equals(name)) {
                        throw new IllegalArgumentException("op " + name + " cannot run inside a pop");
                    }
                }
            }
        }

        @Override
        public void at(int point) {
            for (int i = 0; i < entries.size(); i++) {
                JSONObject e = entries.getJSONObject(i);
                if (fired[i] || e.getIntValue("at") != point) {
                    continue;
                }
                fired[i] = true;
                JSONObject rec = new JSONObject(true);
                rec.put("at", point);
                JSONArray answers = new JSONArray();
                long adv = e.getLongValue("advance");
                VirtualClock.set(VirtualClock.get() + adv);
                // what the POP put so far (a CK stored at once when the buffer is off) reaches the
                // timer first, as the model parks it at its put
                Throwable enqueueFailure = null;
                try {
                    broker.enqueueTimer();
                } catch (Exception ex) {
                    enqueueFailure = ex;
                }
                JSONArray ops = e.getJSONArray("ops") == null ? new JSONArray() : e.getJSONArray("ops");
                for (Object op : ops) {
                    JSONObject a = new JSONObject(true);
                    if (enqueueFailure != null) {
                        a.put("error", "timer enqueue at the interleaving point: " + describe(enqueueFailure));
                        answers.add(a);
                        continue;
                    }
                    try {
                        JSONObject r = (JSONObject) op;
                        a.put("ok", broker.simple(r.getString("op"), r));
                        broker.enqueueTimer();
                    } catch (Throwable t) {
                        a.put("error", describe(t));
                    }
                    answers.add(a);
                }
                rec.put("answers", answers);
                done.add(rec);
            }
        }

        void report(JSONObject o) {
            if (entries.isEmpty()) {
                return;
            }
            o.put("interleaved", done);
            JSONArray missed = new JSONArray();
            for (int i = 0; i < entries.size(); i++) {
                if (!fired[i]) {
                    missed.add(entries.getJSONObject(i).getIntValue("at"));
                }
            }
            o.put("interleaveMissed", missed);
        }
    }
}
