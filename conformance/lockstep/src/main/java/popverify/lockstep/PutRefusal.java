package popverify.lockstep;

import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.rocketmq.broker.failover.EscapeBridge;
import org.apache.rocketmq.common.PopAckConstants;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
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
 * <p>The site names are reference/broker/put_failure.py's PUT_SITES.
 */
public final class PutRefusal {
    /** put_failure.py MAX_PENDING_FAILURES. */
    static final int MAX_PENDING = 8;

    private static int pending;
    /** Revive retry puts still to refuse, whenever they come (`refuseRetryPuts`). */
    private static int retryPending;
    /** The processor site `refuseProcessorPuts` named, and its puts still to refuse. */
    private static String processorSite = "";
    private static int processorPending;
    private static final List<String> FAILED = new ArrayList<>();

    private PutRefusal() {
    }

    /** A new broker (`init` / `reset`): nothing pending, nothing failed. A restart keeps both
     * (the model's StorePutFaults lives with the store, which a restart keeps). */
    static synchronized void clear() {
        pending = 0;
        retryPending = 0;
        processorSite = "";
        processorPending = 0;
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
        return state();
    }

    /** `refuseProcessorPuts` {site: ack | change_invisible_ck, count: 1..8}: the next ``count``
     * puts at that site fail whenever they come (put_failure.py StorePutFaults#arm_processor; the
     * `processor_put_fail` fault). */
    static synchronized JSONObject armProcessor(JSONObject req) {
        String site = req.getString("site");
        if (!"ack".equals(site) && !"change_invisible_ck".equals(site)) {
            throw new IllegalArgumentException("site: ack or change_invisible_ck, got " + site);
        }
        processorPending = Lockstep.bounded(req, "count", -1, 1, MAX_PENDING);
        processorSite = site;
        return state();
    }

    /** {pending, retryPending, failed: [site, ...]}, and {processorSite, processorPending} while
     * that is armed (also part of the `state` answer). */
    static synchronized JSONObject state() {
        JSONObject o = new JSONObject(true);
        o.put("pending", pending);
        o.put("retryPending", retryPending);
        o.put("failed", new JSONArray(new ArrayList<Object>(FAILED)));
        if (processorPending > 0) {
            o.put("processorSite", processorSite);
            o.put("processorPending", processorPending);
        }
        return o;
    }

    /** Whether this put fails (one pending failure used up, the site recorded). */
    private static synchronized boolean take(String site) {
        if ("revive_retry".equals(site) && retryPending > 0) {
            retryPending--;
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

    private static PutMessageResult refused() {
        return new PutMessageResult(PutMessageStatus.CREATE_MAPPED_FILE_FAILED, null);
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
        return take(isCk(msg) ? "buffer_ck" : "buffer_ack") ? refused() : bridge.putMessageToSpecificQueue(msg);
    }

    public static CompletableFuture<PutMessageResult> bufferPutAsync(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return take(isCk(msg) ? "buffer_ck" : "buffer_ack") ? CompletableFuture.completedFuture(refused())
            : asyncPut(bridge, msg);
    }

    // -- AckMessageProcessor: the ACK (or BatchAckMsg) message ----------------------------------

    public static PutMessageResult ackPut(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return take("ack") ? refused() : bridge.putMessageToSpecificQueue(msg);
    }

    public static CompletableFuture<PutMessageResult> ackPutAsync(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return take("ack") ? CompletableFuture.completedFuture(refused()) : asyncPut(bridge, msg);
    }

    // -- ChangeInvisibleTimeProcessor: the new CK, and the ackOrigin's ACK ----------------------

    public static PutMessageResult changePut(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return take(isCk(msg) ? "change_invisible_ck" : "ack") ? refused() : bridge.putMessageToSpecificQueue(msg);
    }

    public static CompletableFuture<PutMessageResult> changePutAsync(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return take(isCk(msg) ? "change_invisible_ck" : "ack") ? CompletableFuture.completedFuture(refused())
            : asyncPut(bridge, msg);
    }

    // -- PopReviveService: reviveRetry's retry-topic put; 5.5.0 rePutCK's store put -------------

    public static PutMessageResult revivePut(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return take("revive_retry") ? refused() : bridge.putMessageToSpecificQueue(msg);
    }

    public static CompletableFuture<PutMessageResult> revivePutAsync(EscapeBridge bridge, MessageExtBrokerInner msg) {
        return take("revive_retry") ? CompletableFuture.completedFuture(refused())
            : asyncPut(bridge, msg);
    }

    public static PutMessageResult reviveStorePut(MessageStore store, MessageExtBrokerInner msg) {
        return take("reput_ck") ? refused() : store.putMessage(msg);
    }
}
