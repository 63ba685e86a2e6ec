package popverify.lockstep;

import com.alibaba.fastjson.JSONObject;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.broker.processor.AdminBrokerProcessor;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.store.CommitLog;
import org.apache.rocketmq.store.logfile.MappedFile;

/**
 * Store retention in the stages DefaultMessageStore performs it, and topic delete / create
 * through AdminBrokerProcessor (spec/conformance.md "Retention and topic deletion"). Requests:
 *
 * <ul>
 *   <li>{@code rollCommitLog}: ends the commit log's current file the way
 *       CommitLog$DefaultAppendMessageCallback#doAppend ends a full one (an 8-byte
 *       END_OF_FILE record: total size = the rest of the file, BLANK_MAGIC_CODE); the next write
 *       opens a new file. No-op on an empty or already full file. Answer {rolled, files}.</li>
 *   <li>{@code deleteCommitLogFiles} {files: 1..1000000}: CleanCommitLogService's forced path
 *       (cleanAtOnce, as under disk pressure): CommitLog#deleteExpiredFile(fileReservedTime,
 *       deletePhysicFilesInterval, destroyMapedFileIntervalForcibly, cleanImmediately = true,
 *       deleteFileBatchMax = files) -&gt; MappedFileQueue#deleteExpiredFileByTime, which deletes
 *       the oldest files and never the newest one. The by-time test reads file mtimes against
 *       the (virtual) clock; cleanImmediately bypasses it, so no wall time is involved.
 *       Answer {deleted, files, minPhyOffset}.</li>
 *   <li>{@code cleanConsumeQueues}: CleanConsumeQueueService#deleteExpiredFiles (5.0.0 an inner
 *       class of DefaultMessageStore; 5.5.0 of ConsumeQueueStore): when the commit log's min
 *       offset passed its lastPhysicalMinOffset, every consume queue runs
 *       ConsumeQueue#deleteExpiredFile(minOffset) (deleteExpiredFileByOffset + correctMinOffset).
 *       Answer {ran}.</li>
 *   <li>{@code deleteTopic} {topic}: DELETE_TOPIC_IN_BROKER (215) through
 *       AdminBrokerProcessor#processRequest. Answer {code, remark}.</li>
 *   <li>{@code createTopic} {topic, queues: 1..1024}: UPDATE_AND_CREATE_TOPIC (17), perm 6
 *       (read/write), as mqadmin updateTopic sends it. Answer {code, remark}.</li>
 * </ul>
 *
 * The broker's own periodic cleaning (DefaultMessageStore#addScheduleTask's
 * cleanFilesPeriodically; 5.5.0 also ConsumeQueueStore#start's cleanQueueFilesPeriodically) is
 * stopped by {@link #quietCleaners}: only these requests delete anything.
 */
final class RetentionOps {
    private static final int UPDATE_AND_CREATE_TOPIC = 17;
    private static final int DELETE_TOPIC_IN_BROKER = 215;
    /** CommitLog#END_FILE_MIN_BLANK_LENGTH: total size + magic code. */
    private static final int END_FILE_MIN_BLANK_LENGTH = 4 + 4;

    private RetentionOps() {
    }

    static Object handle(Lockstep.Broker b, String op, JSONObject req) throws Exception {
        switch (op) {
            case "rollCommitLog":
                return roll(b);
            case "deleteCommitLogFiles":
                return deleteFiles(b, Lockstep.bounded(req, "files", -1, 1, 1_000_000));
            case "cleanConsumeQueues":
                return cleanConsumeQueues(b);
            case "deleteTopic":
                return admin(b, DELETE_TOPIC_IN_BROKER, topicFields(req));
            case "createTopic": {
                Map<String, String> f = topicFields(req);
                int queues = Lockstep.bounded(req, "queues", -1, 1, 1024);
                f.put("defaultTopic", "TBW102");  // MixAll.AUTO_CREATE_TOPIC_KEY_TOPIC, as mqadmin sends
                f.put("readQueueNums", String.valueOf(queues));
                f.put("writeQueueNums", String.valueOf(queues));
                f.put("perm", "6");
                f.put("topicFilterType", "SINGLE_TAG");
                f.put("topicSysFlag", "0");
                f.put("order", "false");
                return admin(b, UPDATE_AND_CREATE_TOPIC, f);
            }
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static Map<String, String> topicFields(JSONObject req) {
        Map<String, String> f = new HashMap<>();
        f.put("topic", Lockstep.required(req, "topic"));
        return f;
    }

    private static JSONObject roll(Lockstep.Broker b) throws Exception {
        CommitLog log = b.store.getCommitLog();
        MappedFile last = log.getMappedFileQueue().getLastMappedFile();
        boolean rolled = false;
        if (last != null && !last.isFull() && last.getWrotePosition() > 0) {
            int rest = last.getFileSize() - last.getWrotePosition();
            // doAppend leaves at least END_FILE_MIN_BLANK_LENGTH free after every message.
            if (rest < END_FILE_MIN_BLANK_LENGTH) {
                throw new IllegalStateException("commit log file has " + rest + " bytes left");
            }
            // doAppend writes only the record's 8-byte header and counts the whole rest as
            // written (wroteBytes = maxBlank); the bytes after it are never read.
            byte[] header = new byte[END_FILE_MIN_BLANK_LENGTH];
            ByteBuffer bb = ByteBuffer.wrap(header);
            bb.putInt(rest);
            bb.putInt(CommitLog.BLANK_MAGIC_CODE);
            if (!last.appendMessage(header)) {
                throw new IllegalStateException("appending the END_OF_FILE record failed");
            }
            last.setWrotePosition(last.getFileSize());
            last.setCommittedPosition(last.getFileSize());
            rolled = true;
        }
        b.settleStore();
        JSONObject o = new JSONObject(true);
        o.put("rolled", rolled);
        o.put("files", log.getMappedFileQueue().getMappedFiles().size());
        return o;
    }

    private static JSONObject deleteFiles(Lockstep.Broker b, int files) throws Exception {
        CommitLog log = b.store.getCommitLog();
        org.apache.rocketmq.store.config.MessageStoreConfig msc = b.controller.getMessageStoreConfig();
        // CleanCommitLogService#deleteExpiredFiles's arguments, with cleanAtOnce and the batch
        // size of this request.
        long fileReservedTime = 60L * 60 * 1000 * msc.getFileReservedTime();
        int deleted = log.deleteExpiredFile(fileReservedTime, msc.getDeleteCommitLogFilesInterval(),
            msc.getDestroyMapedFileIntervalForcibly(), true, files);
        // A destroy refused because another thread holds the file (CommitLog's
        // FlushRealTimeService: MappedFileQueue#flush -> MappedFile#flush hold()s each full file
        // while it forces it) leaves that file unavailable, and deleteExpiredFileByTime stops there.
        // CleanCommitLogService's next runs delete it once the holder released it
        // (DefaultMessageStore 5.0.0 CleanCommitLogService#run:1947-1948, 5.5.0 :2362-2363;
        // ReferenceResource#shutdown/isCleanupOver); this request stands for retention's outcome, so
        // it runs those retries now instead of racing the wall-clock flusher. A file held for good
        // (a leaked read) is still refused: forcing needs destroyMapedFileIntervalForcibly, 120 s.
        for (int tries = 0; deleted < files && tries < 200 && oldestHangs(log); tries++) {
            Thread.sleep(5);
            deleted += log.deleteExpiredFile(fileReservedTime, msc.getDeleteCommitLogFilesInterval(),
                msc.getDestroyMapedFileIntervalForcibly(), true, files - deleted);
        }
        JSONObject o = new JSONObject(true);
        o.put("deleted", deleted);
        o.put("files", log.getMappedFileQueue().getMappedFiles().size());
        o.put("minPhyOffset", log.getMinOffset());
        return o;
    }

    /** Whether the commit log's oldest file (never the newest) had a destroy refused: shut down
     * (unavailable) but still mapped (MappedFileQueue#retryDeleteFirstFile's "destroyed once, but
     * still alive"). */
    private static boolean oldestHangs(CommitLog log) {
        List<MappedFile> files = log.getMappedFileQueue().getMappedFiles();
        return files.size() > 1 && !files.get(0).isAvailable();
    }

    private static Object cleaner(Lockstep.Broker b) throws Exception {
        if (b.version.startsWith("5.0.")) {
            return Reflect.get(b.store, "cleanConsumeQueueService");
        }
        return Reflect.get(b.store.getClass().getMethod("getQueueStore").invoke(b.store), "cleanConsumeQueueService");
    }

    private static JSONObject cleanConsumeQueues(Lockstep.Broker b) throws Exception {
        Object cleaner = cleaner(b);
        long before = (Long) Reflect.get(cleaner, "lastPhysicalMinOffset");
        // deleteExpiredFiles itself, not run(): run() catches and logs what it throws.
        Reflect.invoke(cleaner, "deleteExpiredFiles");
        long after = (Long) Reflect.get(cleaner, "lastPhysicalMinOffset");
        b.settleStore();
        JSONObject o = new JSONObject(true);
        o.put("ran", after != before);
        return o;
    }

    private static JSONObject admin(Lockstep.Broker b, int code, Map<String, String> fields) throws Exception {
        AdminBrokerProcessor p = new AdminBrokerProcessor(b.controller);
        RemotingCommand r = b.call(p, b.request(code, fields));
        JSONObject o = new JSONObject(true);
        o.put("code", r == null ? null : r.getCode());
        o.put("remark", r == null ? null : r.getRemark());
        return o;
    }

    /** Stops the store's periodic cleaning so that retention happens only on request: the
     * executors that run it are shut down after DefaultMessageStore#start (a
     * ScheduledThreadPoolExecutor cancels its periodic tasks on shutdown). The same 5.0.0
     * executor also runs checkSelf, the debug-lock probe and StoreCheckpoint#flush every
     * second; none of them is observable here (the checkpoint matters to an abnormal
     * recovery only; the harness's restart is a graceful shutdown, which flushes it). */
    static void quietCleaners(org.apache.rocketmq.store.MessageStore store) throws Exception {
        ((java.util.concurrent.ExecutorService) Reflect.get(store, "scheduledExecutorService")).shutdown();
        try {
            Reflect.field(store.getClass(), "scheduledCleanQueueExecutorService");
        } catch (NoSuchFieldException e) {
            return;  // 5.0.0: one executor
        }
        ((java.util.concurrent.ExecutorService) Reflect.get(store, "scheduledCleanQueueExecutorService")).shutdown();
    }
}
