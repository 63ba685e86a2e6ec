package popverify.lockstep;

import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.rocketmq.broker.failover.EscapeBridge;
import org.apache.rocketmq.common.PopAckConstants;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.store.AppendMessageResult;
import org.apache.rocketmq.store.AppendMessageStatus;
import org.apache.rocketmq.store.MessageStore;
import org.apache.rocketmq.store.PutMessageResult;
import org.apache.rocketmq.store.PutMessageStatus;

/**
 * Store put failures of the consumption path (the `refusePuts` op; spec/conformance.md "Store
 * put failures"): the next N puts that PopBufferMergeService, AckMessageProcessor,
 * ChangeInvisibleTimeProcessor and PopReviveService make are answered as the store answers a
 * put it cannot write -- {@code new PutMessageResult(CREATE_MAPPED_FILE_FAILED, null)}, what
 * CommitLog#asyncPutMessage returns when no mapped file can be created -- and nothing is written.
 *
 * <p>The TimeAgent rewrites, in those four classes only, each call of
 * EscapeBridge#putMessageToSpecificQueue / #asyncPutMessageToSpecificQueue (every put of theirs
 * on 5.0.0 and 5.5.0) and, in PopReviveService, MessageStore#putMessage (5.5.0's rePutCK) into
 * the static method of this class named after the caller; with nothing armed it calls the
 * original method. Producer puts (the harness's `put`), the timer's own deliveries (TimerMessageStore's
 * escape-bridge hook, EscapeBridge#putMessage) and everything else reach the store untouched.
 *
 * <p>`refuseRetryPuts` and `refuseProcessorPuts` refuse one site's next puts whenever they come
 * (the second refusal of each `refuseRetryPuts` pair with an END_OF_FILE append result: refused());
 * `flushTimeouts` lets one site's next puts through and answers them FLUSH_DISK_TIMEOUT.
 *
 * <p>The site names are reference/broker/put_failure.py's PUT_SITES.
 */
public final class PutRefusal {
    /** put_failure.py MAX_PENDING_FAILURES. */
    static final int MAX_PENDING = 8;

    private static int pending;
    /** Revive retry puts still to refuse, whenever they come (`refuseRetryPuts`). */
    private static int retryPending;
    /** revive5: refuseRetryPuts' refusals since its arming; the second of each pair met the file's
     * end (put_failure.py StorePutFaults#take), and how many were answered so. */
    private static int retryTaken;
    private static int fileEnd;
    /** Whether the refusal take() just granted met the file's end. */
    private static boolean atFileEnd;
    /** The processor site `refuseProcessorPuts` named, and its puts still to refuse. */
    private static String processorSite = "";
    private static int processorPending;
    /** The site `flushTimeouts` named, and its puts still to answer FLUSH_DISK_TIMEOUT. */
    private static String timeoutSite = "";
    private static int timeoutPending;
    private static final List<String> TIMED_OUT = new ArrayList<>();
    /** The sites `refuseProcessorPuts` may name (put_failure.py PROCESSOR_SITES + BUFFER_SITES). */
    private static final List<String> PROCESSOR_SITES =
        java.util.Arrays.asList("ack", "change_invisible_ck", "buffer_ck", "buffer_ack");
    /** The sites `flushTimeouts` may name (put_failure.py FLUSH_TIMEOUT_SITES). */
    private static final List<String> FLUSH_TIMEOUT_SITES =
        java.util.Arrays.asList("buffer_ck", "buffer_ack", "ack", "change_invisible_ck");
    private static final List<String> FAILED = new ArrayList<>();

    private PutRefusal() {
    }

    /** A new broker (`init` / `reset`): nothing pending, nothing failed. A restart keeps both
     * (the model's StorePutFaults lives with the store, which a restart keeps). */
    static synchronized void clear() {
        pending = 0;
        retryPending = 0;
        retryTaken = 0;
        fileEnd = 0;
        processorSite = "";
        processorPending = 0;
        timeoutSite = "";
        timeoutPending = 0;
        TIMED_OUT.clear();
        FAILED.clear();
    }

    /** `refusePuts` {count: 1..8}: the next ``count`` consumption-path puts fail (replaces what
     * was pending, as StorePutFaults#arm). */
    static synchronized JSONObject arm(JSONObject req) {
        pending = Lockstep.bounded(req, "count", -1, 1, MAX_PENDING);
        return state();
    }

    /** `refuseRetryPuts` {count: 1..8}: the next ``count`` revive retry puts fail whenever they
     * come (put_failure.py StorePutFaults#arm_retry; the `revive_put_fail` fault). */
    static synchronized JSONObject armRetry(JSONObject req) {
        retryPending = Lockstep.bounded(req, "count", -1, 1, MAX_PENDING);
        retryTaken = 0;
        return state();
    }

    /** `refuseProcessorPuts` {site: ack | change_invisible_ck | buffer_ck | buffer_ack, count: 1..8}:
     * the next ``count`` puts at that site fail whenever they come (put_failure.py
     * StorePutFaults#arm_processor; the `processor_put_fail` and `buffer_put_fail` faults). */
    static synchronized JSONObject armProcessor(JSONObject req) {
        String site = site(req, PROCESSOR_SITES);
        processorPending = Lockstep.bounded(req, "count", -1, 1, MAX_PENDING);
        processorSite = site;
        return state();
    }

    /** `flushTimeouts` {site: buffer_ck | buffer_ack | ack | change_invisible_ck, count: 1..8}:
     * the next ``count`` puts at that site that are not refused are written and answered
     * FLUSH_DISK_TIMEOUT, what a SYNC_FLUSH store answers when the flush outlasts
     * syncFlushTimeout (CommitLog#handleDiskFlush; put_failure.py StorePutFaults#arm_flush_timeout). */
    static synchronized JSONObject armFlushTimeout(JSONObject req) {
        String site = site(req, FLUSH_TIMEOUT_SITES);
        timeoutPending = Lockstep.bounded(req, "count", -1, 1, MAX_PENDING);
        timeoutSite = site;
        return state();
    }

    /** The request's {@code site}, refused unless it is one of ``allowed``. */
    private static String site(JSONObject req, List<String> allowed) {
        String site = req.getString("site");
        if (!allowed.contains(site)) {
            throw new IllegalArgumentException("site: one of " + String.join(", ", allowed) + ", got " + site);
        }
        return site;
    }

    /** {pending, retryPending, failed: [site, ...]}; {processorSite, processorPending},
     * {timeoutSite, timeoutPending} while armed, timedOut once a put was answered so and fileEnd
     * once a retry refusal carried END_OF_FILE (also part of the `state` answer). */
    static synchronized JSONObject state() {
        JSONObject o = new JSONObject(true);
        o.put("pending", pending);
        o.put("retryPending", retryPending);
        o.put("failed", new JSONArray(new ArrayList<Object>(FAILED)));
        if (processorPending > 0) {
            o.put("processorSite", processorSite);
            o.put("processorPending", processorPending);
        }
        if (timeoutPending > 0) {
            o.put("timeoutSite", timeoutSite);
            o.put("timeoutPending", timeoutPending);
        }
        if (!TIMED_OUT.isEmpty()) {
            o.put("timedOut", new JSONArray(new ArrayList<Object>(TIMED_OUT)));
        }
        if (fileEnd > 0) {
            o.put("fileEnd", fileEnd);
        }
        return o;
    }

    /** Whether this put fails (one pending failure used up, the site recorded). */
    private static synchronized boolean take(String site) {
        atFileEnd = false;
        if ("revive_retry".equals(site) && retryPending > 0) {
            retryPending--;
            atFileEnd = ++retryTaken % 2 == 0;
            fileEnd += atFileEnd ? 1 : 0;
            FAILED.add(site);
            return true;
        }
        if (site.equals(processorSite) && processorPending > 0) {
            processorPending--;
            FAILED.add(site);
            return true;
        }
        if (pending <= 0) {
            return false;
        }
        pending--;
        FAILED.add(site);
        return true;
    }

    /** Whether a put at ``site`` that was not refused answers FLUSH_DISK_TIMEOUT (one used up). */
    private static synchronized boolean timesOut(String site) {
        if (!site.equals(timeoutSite) || timeoutPending <= 0) {
            return false;
        }
        timeoutPending--;
        TIMED_OUT.add(site);
        return true;
    }

    /** A written put's result as a SYNC_FLUSH store's timed-out flush answers it. */
    private static PutMessageResult timedOut(PutMessageResult r) {
        return r != null && r.getPutMessageStatus() == PutMessageStatus.PUT_OK
            ? new PutMessageResult(PutMessageStatus.FLUSH_DISK_TIMEOUT, r.getAppendMessageResult()) : r;
    }

    /** The put at ``site``: refused, written, or written and answered FLUSH_DISK_TIMEOUT. */
    private static PutMessageResult put(String site, EscapeBridge bridge, MessageExtBrokerInner msg) {
        if (take(site)) {
            return refused();
        }
        boolean timeout = timesOut(site);
        PutMessageResult r = bridge.putMessageToSpecificQueue(msg);
        return timeout ? timedOut(r) : r;
    }

    private static CompletableFuture<PutMessageResult> putAsync(String site, EscapeBridge bridge,
        MessageExtBrokerInner msg) {
        if (take(site)) {
            return CompletableFuture.completedFuture(refused());
        }
        boolean timeout = timesOut(site);
        CompletableFuture<PutMessageResult> f = asyncPut(bridge, msg);
        return timeout ? f.thenApply(PutRefusal::timedOut) : f;
    }

    /** CommitLog#asyncPutMessage's answer when it cannot create the next file: before the
     * append (no result, 5.5.0:1076) or, revive5, after an append that met the file's end (its
     * END_OF_FILE result, 5.5.0:1092), which reviveRetry's `status != PUT_OK` test reads. */
    private static synchronized PutMessageResult refused() {
        return new PutMessageResult(PutMessageStatus.CREATE_MAPPED_FILE_FAILED,
            atFileEnd ? new AppendMessageResult(AppendMessageStatus.END_OF_FILE) : null);
    }

    /** EscapeBridge#asyncPutMessageToSpecificQueue, which 5.0.0 lacks (only 5.5.0 bytecode calls
     * the async wrappers; the harness is compiled against either release). */
    @SuppressWarnings("unchecked")
    private static CompletableFuture<PutMessageResult> asyncPut(EscapeBridge bridge, MessageExtBrokerInner msg) {
        try {
            return (CompletableFuture<PutMessageResult>) EscapeBridge.class
                .getMethod("asyncPutMessageToSpecificQueue", MessageExtBrokerInner.class).invoke(bridge, msg);
        } catch (java.lang.reflect.InvocationTargetException e) {
            Throwable c = e.getCause();
            throw c instanceof RuntimeException ? (RuntimeException) c : new IllegalStateException(c);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("EscapeBridge#asyncPutMessageToSpecificQueue: " + e, e);
        }
    }

    private static boolean isCk(MessageExtBrokerInner msg) {
        return PopAckConstants.CK_TAG.equals(msg.getTags());
    }

    // -- PopBufferMergeService: putCkToStore (CK tag), putAckToStore / putBatchAckToStore ------

    public static PutMessageResult bufferPut(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return put(isCk(msg) ? "buffer_ck" : "buffer_ack", bridge, msg);
    }

    public static CompletableFuture<PutMessageResult> bufferPutAsync(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return putAsync(isCk(msg) ? "buffer_ck" : "buffer_ack", bridge, msg);
    }

    // -- AckMessageProcessor: the ACK (or BatchAckMsg) message ----------------------------------

    public static PutMessageResult ackPut(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return put("ack", bridge, msg);
    }

    public static CompletableFuture<PutMessageResult> ackPutAsync(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return putAsync("ack", bridge, msg);
    }

    // -- ChangeInvisibleTimeProcessor: the new CK, and the ackOrigin's ACK ----------------------

    public static PutMessageResult changePut(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return put(isCk(msg) ? "change_invisible_ck" : "ack", bridge, msg);
    }

    public static CompletableFuture<PutMessageResult> changePutAsync(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return putAsync(isCk(msg) ? "change_invisible_ck" : "ack", bridge, msg);
    }

    // -- PopReviveService: reviveRetry's retry-topic put; 5.5.0 rePutCK's store put -------------

    public static PutMessageResult revivePut(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return put("revive_retry", bridge, msg);
    }

    public static CompletableFuture<PutMessageResult> revivePutAsync(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return putAsync("revive_retry", bridge, msg);
    }

    public static PutMessageResult reviveStorePut(MessageStore store, MessageExtBrokerInner msg) {
        return take("reput_ck") ? refused() : store.putMessage(msg);
    }
}
