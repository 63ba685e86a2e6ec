package popverify.lockstep;

import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.store.MessageStore;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.timer.TimerCheckpoint;
import org.apache.rocketmq.store.timer.TimerMessageStore;

/**
 * Builds a BrokerController's store side as BrokerController#initialize does, without its
 * remoting server, scheduled tasks or service threads (see spec/conformance.md). The releases
 * differ: 5.0.0 has one initialize(), so the store part is done here by hand (reflection where
 * the signatures moved); 5.5.0 has initializeMetadata() / initializeMessageStore() and needs a
 * BrokerMetricsManager for its asynchronous POP replies.
 */
final class Setup {
    private Setup() {
    }

    static MessageStore build(BrokerController c, MessageStoreConfig msc, String version, long now) throws Exception {
        // Commit-log files of 8 MB: retention deletes whole files, and the replay ends a file
        // before each producer put (RetentionOps rollCommitLog), so a file holds one produced
        // message and what the broker writes until the next one (CKs, ACKs, timer and retry
        // copies: a few hundred bytes each). 8 MB holds the largest message the broker takes
        // (a maxMessageSize body, 4 MB, and Short.MAX_VALUE of properties: produce_sized) after
        // a roll, as a default 1 GB file does; a roll writes only the END_OF_FILE header, so the
        // rest of a file is never written. The consume queue keeps 30000 units a file, more
        // than any schedule writes to one queue, so its files are never deleted (only the
        // newest is kept by deleteExpiredFileByOffset) and retention moves min offsets only.
        msc.setMappedFileSizeCommitLog(8 * 1024 * 1024);
        // getMessage hands out at most 256 KB / 32 messages of what is "in memory", 64 KB / 8 of
        // what is not: in memory while the commit log grew less than this ratio of the machine's
        // RAM past the message (DefaultMessageStore#isTheBatchFull). 100 %: a run's few GB of
        // (mostly unwritten) files are in memory on any machine with more RAM, as in the model.
        msc.setAccessMessageInMemoryMaxRatio(100);
        msc.setMappedFileSizeConsumeQueue(30_000 * 20);
        if (version.startsWith("5.0.")) {
            return build500(c, msc, now);
        }
        return build55(c, msc, now);
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what + " failed");
        }
    }

    private static MessageStore build500(BrokerController c, MessageStoreConfig msc, long now) throws Exception {
        check(c.getTopicConfigManager().load(), "topicConfigManager.load");
        check((Boolean) Reflect.invoke(Reflect.get(c, "topicQueueMappingManager"), "load"), "topicQueueMappingManager.load");
        check(c.getConsumerOffsetManager().load(), "consumerOffsetManager.load");
        check(c.getSubscriptionGroupManager().load(), "subscriptionGroupManager.load");
        check(c.getConsumerFilterManager().load(), "consumerFilterManager.load");
        check((Boolean) Reflect.invoke(Reflect.get(c, "consumerOrderInfoManager"), "load"), "consumerOrderInfoManager.load");
        Class<?> dms = Class.forName("org.apache.rocketmq.store.DefaultMessageStore");
        Object arriving = Reflect.get(c, "messageArrivingListener");
        Class<?> listener = Class.forName("org.apache.rocketmq.store.MessageArrivingListener");
        Object store = dms.getConstructor(MessageStoreConfig.class, org.apache.rocketmq.store.stats.BrokerStatsManager.class,
            listener, org.apache.rocketmq.common.BrokerConfig.class)
            .newInstance(msc, c.getBrokerStatsManager(), arriving, c.getBrokerConfig());
        dms.getMethod("setTopicConfigTable", java.util.concurrent.ConcurrentMap.class)
            .invoke(store, c.getTopicConfigManager().getTopicConfigTable());
        MessageStore ms = (MessageStore) store;
        Reflect.set(c, "messageStore", ms);
        Class<?> calc = Class.forName("org.apache.rocketmq.broker.filter.CommitLogDispatcherCalcBitMap");
        Object dispatcher = calc.getConstructors()[0].newInstance(c.getBrokerConfig(), c.getConsumerFilterManager());
        @SuppressWarnings("unchecked")
        java.util.LinkedList<Object> dispatchers = (java.util.LinkedList<Object>) (Object) ms.getDispatcherList();
        dispatchers.addFirst(dispatcher);
        TimerCheckpoint cp = new TimerCheckpoint(msc.getStorePathRootDir() + java.io.File.separator + "config"
            + java.io.File.separator + "timercheck");
        Object metrics = Class.forName("org.apache.rocketmq.store.timer.TimerMetrics").getConstructor(String.class)
            .newInstance(msc.getStorePathRootDir() + java.io.File.separator + "config" + java.io.File.separator + "timermetrics");
        TimerMessageStore timer = new TimerMessageStore(ms, msc, cp, (org.apache.rocketmq.store.timer.TimerMetrics) metrics,
            c.getBrokerStatsManager());
        timer.registerEscapeBridgeHook(msg -> c.getEscapeBridge().putMessage(msg));
        ms.setTimerMessageStore(timer);
        c.setTimerMessageStore(timer);
        Reflect.set(c, "timerCheckpoint", cp);
        startTimerAtNow(cp, now);
        c.registerMessageStoreHook();
        check(ms.load(), "messageStore.load");
        check(timer.load(), "timerMessageStore.load");
        return ms;
    }

    private static MessageStore build55(BrokerController c, MessageStoreConfig msc, long now) throws Exception {
        check((Boolean) BrokerController.class.getMethod("initializeMetadata").invoke(c), "initializeMetadata");
        check((Boolean) BrokerController.class.getMethod("initializeMessageStore").invoke(c), "initializeMessageStore");
        startTimerAtNow(c.getTimerCheckpoint(), now);
        c.registerMessageStoreHook();
        MessageStore ms = c.getMessageStore();
        check(ms.load(), "messageStore.load");
        check(c.getTimerMessageStore().load(), "timerMessageStore.load");
        Class<?> bmm = Class.forName("org.apache.rocketmq.broker.metrics.BrokerMetricsManager");
        Object metrics = bmm.getConstructor(BrokerController.class).newInstance(c);
        BrokerController.class.getMethod("setBrokerMetricsManager", bmm).invoke(c, metrics);
        return ms;
    }

    /** A fresh timer checkpoint reads from days back (TimerMessageStore#recover: now - slotsTotal)
     * and walks forward slot by slot; a broker that has been running reads at "now". Only a fresh
     * checkpoint (last read time 0) is moved: a restart keeps its own. */
    private static void startTimerAtNow(TimerCheckpoint cp, long now) {
        if (cp.getLastReadTimeMs() == 0) {
            cp.setLastReadTimeMs(now / 1000 * 1000);
        }
    }
}
