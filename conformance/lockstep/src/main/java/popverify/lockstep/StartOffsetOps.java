package popverify.lockstep;

import com.alibaba.fastjson.JSONObject;
import java.lang.reflect.Method;
import org.apache.rocketmq.store.ConsumeQueue;
import org.apache.rocketmq.store.MappedFileQueue;
import org.apache.rocketmq.store.logfile.MappedFile;

/**
 * The `startQueues` op (spec/conformance.md "Queues that start past offset 0"): every queue of
 * a topic begins at queue offset `offset` (the model's ScenarioConfig.start_offset,
 * MessageStore#start_queue_at), before anything is written to it.
 *
 * <p>The state is the one a broker reaches when a file consume queue is initialised at a
 * queue's current offset: 5.5.0 CombineConsumeQueueStore#start → verifyAndInitOffsetForAllStore
 * (lines 211-272) calls ConsumeQueue#initializeWithOffset(maxOffsetInAssign, minPhyOffset) for
 * each queue of a file store that the assign-offset store (RocksDB) is ahead of. That method destroys the queue's files, sets
 * minLogicOffset to offset*20, creates the mapped file holding that position
 * (MappedFileQueue#getLastMappedFile(offset*20, true)), fills it with blank units up to the
 * position (ConsumeQueue#fillPreBlank) and flushes; getMinOffsetInQueue and
 * getMaxOffsetInQueue then both answer `offset`. The next queue offset the commit log assigns
 * is the store's topic-queue table (ConsumeQueueStore#updateQueueOffset, the value
 * ConsumeQueueStore#recoverOffsetTable puts there: getMaxOffsetInQueue), so the first put
 * gets queue offset `offset`.
 *
 * <p>The units below the offset are blank (commit-log offset 0, size Integer.MAX_VALUE). Those
 * of a queue that really held `offset` messages point into commit-log files retention deleted,
 * so the commit log here begins at {@link #COMMIT_LOG_START} (its first 2048 files of 1 MB gone,
 * the consume-queue cleaner not run since): the blanks end below it. A restart then recovers
 * what the broker with that history recovers: ConsumeQueueStore#recoverOffsetTable →
 * ConsumeQueue#correctMinOffset(minPhyOffset) keeps min at `offset` (the blanks point below
 * the commit log), and ConsumeQueue#recover's maxPhysicOffset from a blank last unit (2^31 - 1)
 * stays below every commit-log offset, so no dispatch is taken for a repeated one.
 *
 * <p>5.0.0 has no initializeWithOffset; the same state is what its
 * ConsumeQueue#putMessagePositionInfo (5.0.0:714-719) builds for the first unit of a new
 * queue whose queue offset is not 0 (minLogicOffset, flushed and committed position at
 * offset*20, fillPreBlank), without the unit itself.
 */
final class StartOffsetOps {
    /** A consume-queue unit's size (ConsumeQueue.CQ_STORE_UNIT_SIZE). */
    private static final long UNIT = 20;
    /** Where the commit log's oldest kept file begins: 2 GiB, past every blank unit's end. */
    static final long COMMIT_LOG_START = 1L << 31;

    private StartOffsetOps() {
    }

    /** `startQueues` {topic?, queues: 1..1024, offset: 1..Long.MAX_VALUE/20 - 1}: answers
     * {min, max}: getMinOffsetInQueue / getMaxOffsetInQueue of queue 0 after. */
    static JSONObject start(Lockstep.Broker b, JSONObject req) throws Exception {
        String topic = req.getString("topic") == null ? Lockstep.TOPIC : req.getString("topic");
        int queues = Lockstep.bounded(req, "queues", -1, 1, 1024);
        Long boxed = req.getLong("offset");
        if (boxed == null || boxed < 1 || boxed >= Long.MAX_VALUE / UNIT) {
            throw new IllegalArgumentException("offset must be in 1.." + (Long.MAX_VALUE / UNIT - 1));
        }
        long offset = boxed;
        Object queueStore = b.store.getClass().getMethod("getQueueStore").invoke(b.store);
        Method find = queueStore.getClass().getMethod("findOrCreateConsumeQueue", String.class, int.class);
        Method update = queueStore.getClass().getMethod("updateQueueOffset", String.class, int.class, long.class);
        MappedFileQueue log = b.store.getCommitLog().getMappedFileQueue();
        if (!log.getMappedFiles().isEmpty()) {
            throw new IllegalStateException("the commit log holds data: queues start before anything is written");
        }
        // the commit log's oldest kept file: MappedFileQueue#getLastMappedFile(startOffset, true)
        // creates the first file at startOffset (the offset of the first put)
        if (log.getLastMappedFile(COMMIT_LOG_START, true) == null) {
            throw new IllegalStateException("commit log file at " + COMMIT_LOG_START + " not created");
        }
        long minPhy = b.store.getMinPhyOffset();
        for (int q = 0; q < queues; q++) {
            ConsumeQueue cq = (ConsumeQueue) find.invoke(queueStore, topic, q);
            if (cq.getMaxOffsetInQueue() != 0) {
                throw new IllegalStateException("queue " + topic + ":" + q + " already holds units");
            }
            if (b.version.startsWith("5.0.")) {
                firstCreate500(cq, offset);
            } else {
                ConsumeQueue.class.getMethod("initializeWithOffset", long.class, long.class).invoke(cq, offset, minPhy);
            }
            update.invoke(queueStore, topic, q, offset);
        }
        JSONObject o = new JSONObject(true);
        o.put("min", b.store.getMinOffsetInQueue(topic, 0));
        o.put("max", b.store.getMaxOffsetInQueue(topic, 0));
        return o;
    }

    /** 5.0.0 ConsumeQueue#putMessagePositionInfo's first-create branch (lines 714-719) at
     * expectLogicOffset = offset*20, without appending the unit. */
    private static void firstCreate500(ConsumeQueue cq, long offset) throws Exception {
        long logic = offset * UNIT;
        MappedFileQueue files = (MappedFileQueue) Reflect.get(cq, "mappedFileQueue");
        MappedFile file = files.getLastMappedFile(logic, true);
        if (file == null || !file.isFirstCreateInQueue() || file.getWrotePosition() != 0) {
            throw new IllegalStateException("consume queue file for offset " + offset + " not created fresh");
        }
        cq.setMinLogicOffset(logic);
        files.setFlushedWhere(logic);
        files.setCommittedWhere(logic);
        Method fill = ConsumeQueue.class.getDeclaredMethod("fillPreBlank", MappedFile.class, long.class);
        fill.setAccessible(true);
        fill.invoke(cq, file, logic);
    }
}
