package popverify.lockstep;

import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListSet;
import org.apache.rocketmq.broker.longpolling.PopRequest;
import org.apache.rocketmq.remoting.netty.RequestTask;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * Long-polling POP replayed as a parked request (spec/conformance.md "Long polling"). A POP sent
 * with pollTime and nothing to deliver parks in PopMessageProcessor#polling; a put's
 * notifyMessageArriving, or the polling service's timeout scan, wakes it: wakeUp submits the
 * re-run of processRequest to the pullMessageExecutor (the harness's QueuedExecutor).
 *
 * <ul>
 *   <li>`deferWoken` {}: woken re-runs wait for `runWoken` instead of running right after the
 *   request that woke them, so the replay compares the waking step first and each re-run when
 *   the model's re-run of that request finishes (the model steps a woken POP like any other).
 *   Cleared by `init`.</li>
 *   <li>`runWoken` {opaque}: runs the queued re-run of that request; answers {ran, answers}:
 *   whether one was queued, and its POP answers (none when it parked again).</li>
 *   <li>`pollingTimeout` {}: the polling service's own loop (5.0.0
 *   PopMessageProcessor$PopLongPollingService#run, 5.5.0 PopLongPollingService#run), run for
 *   {@link #LOOP_PASSES} passes on the harness thread at the virtual time (ServiceLoops): per
 *   polling key, the parked requests in order while they are timed out (PopRequest#isTimeout),
 *   each taken out, totalPollingNum decremented, and woken (wakeUp); cleanUnusedResource when
 *   due. Answers {woken: [opaque...]}.</li>
 *   <li>`closeChannel` {opaque}: the client of that parked request closed its connection (the
 *   model's consumer_close): the request's channel becomes a closed one, so wakeUp and
 *   notifyMessageArriving's inactive-channel tests drop it. Answers {closed}: whether it was parked.</li>
 * </ul>
 */
public final class LongPollOps {
    private static boolean deferred;
    /** Passes of the polling loop per `pollingTimeout`: its statistics run at the 100th (`i`). */
    static final int LOOP_PASSES = 100;

    private LongPollOps() {
    }

    static boolean deferred() {
        return deferred;
    }

    /** `init`: re-runs run right after their request again. */
    static void clear() {
        deferred = false;
    }

    static JSONObject handle(Lockstep.Broker b, String op, JSONObject req) throws Throwable {
        JSONObject o = new JSONObject(true);
        switch (op) {
            case "deferWoken":
                deferred = true;
                return o;
            case "runWoken":
                return runWoken(b, Lockstep.bounded(req, "opaque", -1, 1, Integer.MAX_VALUE));
            case "closeChannel":
                o.put("closed", closeChannel(b.controller.getPopMessageProcessor(),
                                             Lockstep.bounded(req, "opaque", -1, 1, Integer.MAX_VALUE)));
                return o;
            case "pollingTimeout":
                o.put("woken", timeoutScan(b.controller.getPopMessageProcessor()));
                return o;
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    /** The requests whose re-runs are queued, by opaque, in order. */
    static JSONArray queuedOpaques(Lockstep.Broker b) {
        JSONArray out = new JSONArray();
        for (Runnable task : b.woken.snapshot()) {
            out.add(opaqueOf(task));
        }
        return out;
    }

    /** The opaque of the request a queued re-run is for (wakeUp submits a RequestTask). */
    private static int opaqueOf(Runnable task) {
        Runnable submitted = task instanceof QueuedExecutor.Task ? ((QueuedExecutor.Task<?>) task).submitted : task;
        if (!(submitted instanceof RequestTask)) {
            return -1;
        }
        try {
            return ((RemotingCommand) Reflect.get(submitted, "request")).getOpaque();
        } catch (Exception e) {
            throw new IllegalStateException("RequestTask without its request field", e);
        }
    }

    private static JSONObject runWoken(Lockstep.Broker b, int opaque) throws Exception {
        JSONObject o = new JSONObject(true);
        Runnable task = b.woken.take(t -> opaqueOf(t) == opaque);
        o.put("ran", task != null);
        if (task == null) {
            return o;
        }
        task.run();
        b.settleStore();
        b.enqueueTimer();
        JSONArray answers = new JSONArray();
        for (Object out = b.channel.readOutbound(); out != null; out = b.channel.readOutbound()) {
            if (out instanceof RemotingCommand) {
                answers.add(b.popAnswer((RemotingCommand) out, null));
            }
        }
        o.put("answers", answers);
        return o;
    }

    /**
     * The polling service's shutdown, as BrokerController#shutdownBasicService runs it on a
     * restart (5.0.0:1239, 5.5.0:1553): ServiceThread#shutdown sets {@code stopped} and the loop's
     * thread runs run()'s tail, which takes every parked request out and wakes it (5.0.0
     * PopMessageProcessor$PopLongPollingService#run:852-862, 5.5.0 PopLongPollingService#run:155-164).
     * The remoting server shut down first (5.0.0:1219, 5.5.0:1532), so every channel is closed
     * and wakeUp answers nothing: the caller closes the channel before. The harness never starts
     * the thread, so it sets the flag and runs the loop here (its test reads the flag:
     * ServiceLoops#stopped), and the loop ends at once.
     */
    static void shutdownTail(Object processor) throws Exception {
        Runnable service = (Runnable) Reflect.get(processor, "popLongPollingService");
        Reflect.set(service, "stopped", true);
        service.run();
    }

    /**
     * The parked request {@code opaque} gets a closed channel: 5.5.0's PopRequest reads it from
     * its ctx, 5.0.0's holds the channel itself (the harness has one channel for every client).
     */
    private static boolean closeChannel(Object processor, int opaque) throws Exception {
        for (ConcurrentSkipListSet<PopRequest> queue : pollingMap(processor).values()) {
            for (PopRequest r : queue) {
                if (r.getRemotingCommand().getOpaque() != opaque) {
                    continue;
                }
                EmbeddedChannel closed = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
                ChannelHandlerContext ctx = closed.pipeline().firstContext();  // gone from the pipeline once closed
                closed.close();
                try {
                    Reflect.setFinal(r, Reflect.field(PopRequest.class, "ctx"), ctx);
                } catch (NoSuchFieldException e) {
                    Reflect.set(r, "channel", closed);  // 5.0.0
                }
                return true;
            }
        }
        return false;
    }

    /** The polling service (5.5.0) or PopMessageProcessor itself (5.0.0): the owner of the map. */
    private static Object owner(Object processor) throws Exception {
        Object service = Reflect.get(processor, "popLongPollingService");
        try {
            Reflect.field(service.getClass(), "pollingMap");
            return service;
        } catch (NoSuchFieldException e) {
            return processor;  // 5.0.0's inner PopLongPollingService reads its processor's fields
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, ConcurrentSkipListSet<PopRequest>> pollingMap(Object processor) throws Exception {
        Object map = Reflect.get(owner(processor), "pollingMap");
        if (map instanceof Map) {
            return (Map<String, ConcurrentSkipListSet<PopRequest>>) map;  // 5.0.0
        }
        // 5.5.0: a Caffeine Cache (not on 5.0.0's classpath)
        Method asMap = Class.forName("com.github.benmanes.caffeine.cache.Cache").getMethod("asMap");
        return (Map<String, ConcurrentSkipListSet<PopRequest>>) asMap.invoke(map);
    }

    /**
     * {@link #LOOP_PASSES} passes of the polling service's own loop at the current virtual time
     * (ServiceLoops: the wait is no wait, the loop ends before its shutdown tail). One pass wakes
     * the timed-out requests; the later passes find none (nothing else moves at a fixed time), and
     * the 100th runs the loop's statistics block (`i >= 100`: totalPollingNum set to the parked
     * count, which the replay keeps equal to it). The first pass ever, and the first 5 minutes of
     * virtual time after the last, run cleanUnusedResource. Answers the requests woken (parked
     * before, gone after), in the map's order.
     */
    private static JSONArray timeoutScan(Object processor) throws Throwable {
        Runnable service = (Runnable) Reflect.get(processor, "popLongPollingService");
        List<PopRequest> before = new ArrayList<>();
        for (ConcurrentSkipListSet<PopRequest> queue : pollingMap(processor).values()) {
            before.addAll(queue);
        }
        ServiceLoops.pass(service, LOOP_PASSES);
        Set<PopRequest> after = Collections.newSetFromMap(new IdentityHashMap<>());
        for (ConcurrentSkipListSet<PopRequest> queue : pollingMap(processor).values()) {
            after.addAll(queue);
        }
        JSONArray woken = new JSONArray();
        for (PopRequest r : before) {
            if (!after.contains(r)) {
                woken.add(r.getRemotingCommand().getOpaque());
            }
        }
        return woken;
    }
}
