package popverify.lockstep;

import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.broker.processor.AdminBrokerProcessor;
import org.apache.rocketmq.broker.processor.ClientManageProcessor;
import org.apache.rocketmq.broker.processor.ConsumerManageProcessor;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.netty.NettyRequestProcessor;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * The push consumer's broker requests (spec/conformance.md "Push lockstep"): PULL_MESSAGE through
 * PullMessageProcessor, QUERY/UPDATE_CONSUMER_OFFSET and GET_CONSUMER_LIST_BY_GROUP through
 * ConsumerManageProcessor, HEART_BEAT / UNREGISTER_CLIENT through ClientManageProcessor,
 * GET_MIN/MAX_OFFSET and SEARCH_OFFSET_BY_TIMESTAMP through AdminBrokerProcessor, each sent as
 * a RemotingCommand to the processor's processRequest, as the remoting layer hands it.
 *
 * Every client id has a channel of its own (an EmbeddedChannel): ConsumerManager keys a group's
 * members by channel, and a pull that PullRequestHoldService held answers on the channel it came
 * in on (PullMessageProcessor#executeRequestWhenWakeup). One instance per broker (a restart or
 * reset starts a new one: the connections are gone). Requests come one at a time from the
 * harness's stdin loop.
 */
final class PullOps {
    private static final int PULL_MESSAGE = 11;
    private static final int LITE_PULL_MESSAGE = 361;  // RequestCode.LITE_PULL_MESSAGE
    private static final int QUERY_CONSUMER_OFFSET = 14;
    private static final int UPDATE_CONSUMER_OFFSET = 15;
    private static final int SEARCH_OFFSET_BY_TIMESTAMP = 29;
    private static final int GET_MAX_OFFSET = 30;
    private static final int GET_MIN_OFFSET = 31;
    private static final int HEART_BEAT = 34;
    private static final int UNREGISTER_CLIENT = 35;
    private static final int GET_CONSUMER_LIST_BY_GROUP = 38;
    private static final int LOCK_BATCH_MQ = 41;
    private static final int UNLOCK_BATCH_MQ = 42;
    private static final int CONSUMER_SEND_MSG_BACK = 36;

    /** The ops of the live broker (one at a time; a new broker -- init, reset, restart -- gets new ones). */
    private static PullOps current;
    private final Lockstep.Broker broker;
    private final Map<String, EmbeddedChannel> channels = new TreeMap<>();
    private final ConsumerManageProcessor consumerManage;
    private final ClientManageProcessor clientManage;
    private final AdminBrokerProcessor admin;
    /** Pulls the hold service may still answer: opaque -> (client, topic, queue, offset). */
    private final Map<Integer, JSONObject> sent = new HashMap<>();
    /** Answers of woken pulls found on a channel before `held` collected them. */
    private final List<Object[]> early = new ArrayList<>();

    private PullOps(Lockstep.Broker broker) {
        this.broker = broker;
        this.consumerManage = new ConsumerManageProcessor(broker.controller);
        this.clientManage = new ClientManageProcessor(broker.controller);
        this.admin = new AdminBrokerProcessor(broker.controller);
        // NOTIFY_CONSUMER_IDS_CHANGED goes to the clients through a remoting server this broker
        // does not have (Broker2Client#notifyConsumerIdsChanged); the model's clients learn of a
        // membership change at their next rebalance, which the schedule draws.
        broker.controller.getBrokerConfig().setNotifyConsumerIdsChangedEnable(false);
        try {
            takeOverSchedule();
        } catch (Exception e) {
            throw new IllegalStateException("ScheduleMessageService set-up failed: " + Lockstep.describe(e), e);
        }
    }

    // -- ScheduleMessageService, stepped ----------------------------------------------------------

    /** Delivery tasks the schedule service handed its executor, run only by `scheduleStep`. */
    private final List<Runnable> scheduled = new ArrayList<>();
    /** True while `scheduleStep` runs the delivery tasks (see #takeOverSchedule's put hook). */
    private boolean delivering;

    /** ScheduleMessageService as BrokerController#start would run it, but stepped: load() (the
     * delay levels -- without them HookUtils#transformDelayLevelMessage would clip every level to
     * 0 -- and the persisted per-level offsets), `started` set, and an executor that keeps the
     * DeliverDelayedMessageTimerTasks it is given instead of running them 100 ms later. Each
     * level's first task is the one #start schedules (its offset from the offset table). */
    private void takeOverSchedule() throws Exception {
        Object svc = broker.controller.getScheduleMessageService();
        if (!(Boolean) svc.getClass().getMethod("load").invoke(svc)) {
            throw new IllegalStateException("ScheduleMessageService#load failed");
        }
        java.util.concurrent.ScheduledThreadPoolExecutor capture = new java.util.concurrent.ScheduledThreadPoolExecutor(1) {
            @Override
            public java.util.concurrent.ScheduledFuture<?> schedule(Runnable task, long delay, java.util.concurrent.TimeUnit unit) {
                scheduled.add(task);
                return null;  // ScheduleMessageService never reads it
            }
        };
        Reflect.set(svc, "deliverExecutorService", capture);
        ((java.util.concurrent.atomic.AtomicBoolean) Reflect.get(svc, "started")).set(true);
        @SuppressWarnings("unchecked")
        Map<Integer, Long> levels = (Map<Integer, Long>) Reflect.get(svc, "delayLevelTable");
        @SuppressWarnings("unchecked")
        Map<Integer, Long> offsets = (Map<Integer, Long>) Reflect.get(svc, "offsetTable");
        Class<?> taskClass = Class.forName(svc.getClass().getName() + "$DeliverDelayedMessageTimerTask");
        java.lang.reflect.Constructor<?> ctor = taskClass.getDeclaredConstructor(svc.getClass(), int.class, long.class);
        ctor.setAccessible(true);
        for (Integer level : new java.util.TreeSet<>(levels.keySet())) {
            Long offset = offsets.get(level);
            scheduled.add((Runnable) ctor.newInstance(svc, level, offset == null ? 0L : offset));
        }
        // A delivery task puts its due messages one after the other; in a running broker the
        // reput thread may dispatch each (and PullRequestHoldService wake a held pull, which the
        // pull executor answers) before the next put. The model takes that earliest interleaving
        // (Broker#_on_put wakes at every put); so does the harness: before each put of a delivery,
        // what is stored is dispatched and the woken pulls run.
        broker.store.getPutMessageHookList().add(new org.apache.rocketmq.store.hook.PutMessageHook() {
            @Override
            public String hookName() {
                return "popverify-lockstep-schedule-dispatch";
            }

            @Override
            public org.apache.rocketmq.store.PutMessageResult executeBeforePutMessage(org.apache.rocketmq.common.message.MessageExt msg) {
                if (delivering) {
                    try {
                        runWoken();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
                return null;  // go on with the put
            }
        });
    }

    /** Dispatch what is stored, then run the pulls the hold service woke (answers stay on their
     * channels for `pullHeld`). */
    private void runWoken() throws Exception {
        broker.settleStore();
        for (Runnable task = broker.woken.next(); task != null; task = broker.woken.next()) {
            task.run();
            broker.settleStore();
        }
    }

    /** One pass of every delay level's delivery task (DeliverDelayedMessageTimerTask#run at the
     * virtual now): due messages go to their real topic, each task schedules its successor. The
     * answer: how many messages the named topics gained. */
    JSONObject scheduleStep(JSONObject req) throws Exception {
        JSONArray topics = req.getJSONArray("topics");
        long before = total(topics);
        List<Runnable> tasks = new ArrayList<>(scheduled);
        scheduled.clear();
        delivering = true;
        try {
            for (Runnable t : tasks) {
                t.run();
                runWoken();
            }
        } finally {
            delivering = false;
        }
        JSONObject o = new JSONObject(true);
        o.put("delivered", total(topics) - before);
        return o;
    }

    private long total(JSONArray topics) throws Exception {
        long n = 0;
        for (Object t : topics == null ? new JSONArray() : topics) {
            org.apache.rocketmq.common.TopicConfig tc = broker.controller.getTopicConfigManager().selectTopicConfig((String) t);
            for (int q = 0; tc != null && q < tc.getWriteQueueNums(); q++) {
                n += Math.max(0, broker.store.getMaxOffsetInQueue((String) t, q));
            }
        }
        return n;
    }

    /** CONSUMER_SEND_MSG_BACK through SendMessageProcessor (AbstractSendMessageProcessor#consumerSendMsgBack),
     * the header MQClientAPIImpl#consumerSendMessageBack builds: the message's commit-log offset on
     * this broker, the group, the delay level, its msgId and topic, maxReconsumeTimes. */
    JSONObject sendBack(JSONObject req) throws Exception {
        String clientId = Lockstep.required(req, "clientId");
        Map<String, String> f = new TreeMap<>();
        f.put("offset", String.valueOf(Lockstep.boundedLong(req, "offset", -1, 0, Long.MAX_VALUE)));
        f.put("group", group(req));
        f.put("delayLevel", String.valueOf(Lockstep.bounded(req, "delayLevel", 0, -1, 1024)));
        f.put("originMsgId", req.getString("originMsgId"));
        f.put("originTopic", req.getString("originTopic"));
        f.put("unitMode", "false");
        f.put("maxReconsumeTimes", String.valueOf(Lockstep.bounded(req, "maxReconsumeTimes", 16, -1, Integer.MAX_VALUE)));
        RemotingCommand response = call(broker.controller.getSendMessageProcessor(), clientId,
            broker.request(CONSUMER_SEND_MSG_BACK, f));
        return codeOf(response);
    }

    /** The one-line dispatch target of Lockstep.Broker#simple. */
    static Object handle(Lockstep.Broker broker, String op, JSONObject req) throws Exception {
        if (current == null || current.broker != broker) {
            current = new PullOps(broker);
        }
        PullOps ops = current;
        switch (op) {
            case "heartbeat":
                return ops.heartbeat(req);
            case "unregister":
                return ops.unregister(req);
            case "pull":
                return ops.pull(req);
            case "pullHeld":
                return ops.held();
            case "queryOffset":
                return ops.queryOffset(req);
            case "updateOffset":
                return ops.updateOffset(req);
            case "consumerList":
                return ops.consumerList(req);
            case "minOffset":
                return ops.queueOffset(GET_MIN_OFFSET, req, null);
            case "maxOffset":
                return ops.queueOffset(GET_MAX_OFFSET, req, null);
            case "searchOffset":
                return ops.queueOffset(SEARCH_OFFSET_BY_TIMESTAMP, req,
                    String.valueOf(Lockstep.boundedLong(req, "timestamp", -1, 0, Long.MAX_VALUE)));
            case "pushState":
                return ops.state(req);
            case "sendBack":
                return ops.sendBack(req);
            case "scheduleStep":
                return ops.scheduleStep(req);
            case "lockBatch":
                return ops.lockBatch(req, LOCK_BATCH_MQ);
            case "unlockBatch":
                return ops.lockBatch(req, UNLOCK_BATCH_MQ);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private EmbeddedChannel channel(String clientId) {
        return channels.computeIfAbsent(clientId, k -> new EmbeddedChannel(new ChannelInboundHandlerAdapter()));
    }

    private static String group(JSONObject req) {
        return Lockstep.required(req, "group");
    }

    private RemotingCommand call(NettyRequestProcessor p, String clientId, RemotingCommand request) throws Exception {
        EmbeddedChannel ch = channel(clientId);
        stash(clientId, ch);
        RemotingCommand response = p.processRequest(ch.pipeline().firstContext(), request);
        for (Object out = ch.readOutbound(); out != null; out = ch.readOutbound()) {
            if (response == null && out instanceof RemotingCommand && ((RemotingCommand) out).getOpaque() == request.getOpaque()) {
                response = (RemotingCommand) out;  // an answer written to the channel instead of returned
            } else if (out instanceof RemotingCommand) {
                early.add(new Object[] {clientId, out});
            }
        }
        broker.settleStore();
        return response;
    }

    /** Woken answers already on a channel are kept for `pullHeld` before a new request runs. */
    private void stash(String clientId, EmbeddedChannel ch) {
        for (Object out = ch.readOutbound(); out != null; out = ch.readOutbound()) {
            if (out instanceof RemotingCommand) {
                early.add(new Object[] {clientId, out});
            }
        }
    }

    private static JSONObject codeOf(RemotingCommand response) {
        JSONObject o = new JSONObject(true);
        o.put("code", response == null ? null : response.getCode());
        o.put("remark", response == null ? null : response.getRemark());
        return o;
    }

    /** HEART_BEAT with one consumer's data (DefaultMQPushConsumer: CONSUME_PASSIVELY, CLUSTERING or the request's messageModel,
     * CONSUME_FROM_LAST_OFFSET, TAG "*" on every topic), as HeartbeatData's JSON. The request may name
     * the consumeType (a pull consumer's CONSUME_ACTIVELY) and the subscription's subString and
     * expressionType (MessageSelector.bySql: SQL92; FilterAPI#build keeps no tags for it). */
    JSONObject heartbeat(JSONObject req) throws Exception {
        String clientId = Lockstep.required(req, "clientId");
        JSONArray topics = req.getJSONArray("topics");
        if (topics == null) {
            throw new IllegalArgumentException("missing field topics");
        }
        String subString = req.getString("subString");
        String expressionType = req.getString("expressionType");
        String consumeType = req.getString("consumeType");
        JSONArray subs = new JSONArray();
        for (Object t : topics) {
            JSONObject s = new JSONObject(true);
            s.put("classFilterMode", false);
            s.put("topic", t);
            s.put("subString", subString == null ? "*" : subString);
            s.put("tagsSet", new JSONArray());
            s.put("codeSet", new JSONArray());
            s.put("subVersion", req.getLongValue("subVersion"));
            s.put("expressionType", expressionType == null ? "TAG" : expressionType);
            subs.add(s);
        }
        JSONObject consumer = new JSONObject(true);
        consumer.put("groupName", group(req));
        consumer.put("consumeType", consumeType == null ? "CONSUME_PASSIVELY" : consumeType);
        String model = req.getString("messageModel");
        consumer.put("messageModel", model == null ? "CLUSTERING" : model);
        consumer.put("consumeFromWhere", "CONSUME_FROM_LAST_OFFSET");
        consumer.put("subscriptionDataSet", subs);
        consumer.put("unitMode", false);
        JSONObject data = new JSONObject(true);
        data.put("clientID", clientId);
        data.put("producerDataSet", new JSONArray());
        JSONArray consumers = new JSONArray();
        consumers.add(consumer);
        data.put("consumerDataSet", consumers);
        RemotingCommand request = broker.request(HEART_BEAT, new TreeMap<>());
        request.setBody(data.toJSONString().getBytes(StandardCharsets.UTF_8));
        return codeOf(call(clientManage, clientId, request));
    }

    /** LOCK_BATCH_MQ / UNLOCK_BATCH_MQ through AdminBrokerProcessor (RebalanceLockManager; the
     * client's RebalanceImpl#lock / #unlock send onlyThisBroker false, and lockInStrictMode is off
     * by default, so only this broker's lock manager answers). The body is LockBatchRequestBody's
     * / UnlockBatchRequestBody's JSON; LOCK answers LockBatchResponseBody's lockOKMQSet. */
    JSONObject lockBatch(JSONObject req, int code) throws Exception {
        String clientId = Lockstep.required(req, "clientId");
        JSONArray queues = req.getJSONArray("mqSet");
        if (queues == null) {
            throw new IllegalArgumentException("missing field mqSet");
        }
        JSONObject body = new JSONObject(true);
        body.put("consumerGroup", group(req));
        body.put("clientId", clientId);
        body.put("onlyThisBroker", false);
        body.put("mqSet", queues);
        RemotingCommand request = broker.request(code, new TreeMap<>());
        request.setBody(body.toJSONString().getBytes(StandardCharsets.UTF_8));
        RemotingCommand response = call(admin, clientId, request);
        JSONObject o = codeOf(response);
        if (code == LOCK_BATCH_MQ) {
            JSONArray locked = new JSONArray();
            if (response != null && response.getCode() == 0 && response.getBody() != null) {
                JSONArray ok = JSONObject.parseObject(new String(response.getBody(), StandardCharsets.UTF_8))
                    .getJSONArray("lockOKMQSet");
                List<String> keys = new ArrayList<>();
                for (Object mq : ok == null ? new JSONArray() : ok) {
                    JSONObject m = (JSONObject) mq;
                    keys.add(m.getString("topic") + ":" + m.getIntValue("queueId"));
                }
                java.util.Collections.sort(keys);
                locked.addAll(keys);
            }
            o.put("locked", locked);
        }
        return o;
    }

    JSONObject unregister(JSONObject req) throws Exception {
        String clientId = Lockstep.required(req, "clientId");
        Map<String, String> f = new TreeMap<>();
        f.put("clientID", clientId);
        f.put("consumerGroup", group(req));
        return codeOf(call(clientManage, clientId, broker.request(UNREGISTER_CLIENT, f)));
    }

    JSONObject consumerList(JSONObject req) throws Exception {
        String clientId = Lockstep.required(req, "clientId");
        Map<String, String> f = new TreeMap<>();
        f.put("consumerGroup", group(req));
        RemotingCommand response = call(consumerManage, clientId, broker.request(GET_CONSUMER_LIST_BY_GROUP, f));
        JSONObject o = codeOf(response);
        JSONArray ids = new JSONArray();
        if (response != null && response.getCode() == 0 && response.getBody() != null) {
            JSONObject body = JSONObject.parseObject(new String(response.getBody(), StandardCharsets.UTF_8));
            JSONArray list = body.getJSONArray("consumerIdList");
            if (list != null) {
                List<String> sorted = new ArrayList<>(list.toJavaList(String.class));
                java.util.Collections.sort(sorted);
                ids.addAll(sorted);
            }
        }
        o.put("consumerIdList", ids);
        return o;
    }

    private Map<String, String> queueFields(JSONObject req) {
        return queueFields(req, 0);
    }

    private Map<String, String> queueFields(JSONObject req, int lowestQueueId) {
        Map<String, String> f = new TreeMap<>();
        f.put("topic", Lockstep.required(req, "topic"));
        f.put("queueId", String.valueOf(Lockstep.bounded(req, "queueId", -1, lowestQueueId, 1023)));
        return f;
    }

    JSONObject queryOffset(JSONObject req) throws Exception {
        String clientId = Lockstep.required(req, "clientId");
        Map<String, String> f = queueFields(req);
        f.put("consumerGroup", group(req));
        RemotingCommand response = call(consumerManage, clientId, broker.request(QUERY_CONSUMER_OFFSET, f));
        JSONObject o = codeOf(response);
        o.put("offset", response == null || response.getCode() != 0 ? null : Long.valueOf(Lockstep.Broker.header(response).get("offset")));
        return o;
    }

    JSONObject updateOffset(JSONObject req) throws Exception {
        String clientId = Lockstep.required(req, "clientId");
        Map<String, String> f = queueFields(req);
        f.put("consumerGroup", group(req));
        f.put("commitOffset", String.valueOf(Lockstep.boundedLong(req, "commitOffset", -1, -1, Long.MAX_VALUE)));
        return codeOf(call(consumerManage, clientId, broker.request(UPDATE_CONSUMER_OFFSET, f)));
    }

    /** GET_MIN_OFFSET / GET_MAX_OFFSET / SEARCH_OFFSET_BY_TIMESTAMP: the header's offset. */
    JSONObject queueOffset(int code, JSONObject req, String timestamp) throws Exception {
        String clientId = req.getString("clientId") == null ? "admin" : req.getString("clientId");
        Map<String, String> f = queueFields(req);
        if (timestamp != null) {
            f.put("timestamp", timestamp);
        }
        RemotingCommand response = call(admin, clientId, broker.request(code, f));
        JSONObject o = codeOf(response);
        o.put("offset", response == null || response.getCode() != 0 ? null : Long.valueOf(Lockstep.Broker.header(response).get("offset")));
        return o;
    }

    JSONObject pull(JSONObject req) throws Exception {
        String clientId = Lockstep.required(req, "clientId");
        // a pull may name queue -1 or one past the topic's read queues (the model's pull_request)
        Map<String, String> f = queueFields(req, -1);
        f.put("consumerGroup", group(req));
        f.put("queueOffset", String.valueOf(Lockstep.boundedLong(req, "queueOffset", -1, -1, Long.MAX_VALUE)));
        f.put("maxMsgNums", String.valueOf(Lockstep.bounded(req, "maxMsgNums", 32, 1, 1024)));
        f.put("sysFlag", String.valueOf(Lockstep.bounded(req, "sysFlag", 0, 0, 255)));
        f.put("commitOffset", String.valueOf(Lockstep.boundedLong(req, "commitOffset", 0, -1, Long.MAX_VALUE)));
        f.put("suspendTimeoutMillis", String.valueOf(Lockstep.boundedLong(req, "suspendTimeoutMillis", 0, 0, 86_400_000L)));
        String sub = req.getString("subscription");
        if (sub != null) {
            f.put("subscription", sub);
        }
        f.put("subVersion", String.valueOf(req.getLongValue("subVersion")));
        String type = req.getString("expressionType");
        f.put("expressionType", type == null ? "TAG" : type);
        // a DefaultLitePullConsumer's request code; the processor serves both codes
        RemotingCommand request = broker.request(req.getBooleanValue("lite") ? LITE_PULL_MESSAGE : PULL_MESSAGE, f);
        RemotingCommand response = call(broker.controller.getPullMessageProcessor(), clientId, request);
        if (response == null) {
            JSONObject key = new JSONObject(true);
            key.put("clientId", clientId);
            key.put("topic", f.get("topic"));
            key.put("queueId", Integer.valueOf(f.get("queueId")));
            key.put("queueOffset", Long.valueOf(f.get("queueOffset")));
            sent.put(request.getOpaque(), key);
            JSONObject o = new JSONObject(true);
            o.put("suspended", true);
            return o;
        }
        return pullAnswer(response);
    }

    /** PULL_MESSAGE's answer: code, PullMessageResponseHeader and the messages. */
    static JSONObject pullAnswer(RemotingCommand response) throws Exception {
        Map<String, String> hd = Lockstep.Broker.header(response);
        JSONObject o = new JSONObject(true);
        o.put("suspended", false);
        o.put("code", response.getCode());
        o.put("remark", response.getRemark());
        o.put("nextBeginOffset", longOf(hd.get("nextBeginOffset")));
        o.put("minOffset", longOf(hd.get("minOffset")));
        o.put("maxOffset", longOf(hd.get("maxOffset")));
        o.put("suggestWhichBrokerId", longOf(hd.get("suggestWhichBrokerId")));
        JSONArray msgs = new JSONArray();
        if (response.getCode() == 0 && response.getBody() != null) {
            for (MessageExt m : MessageDecoder.decodes(ByteBuffer.wrap(response.getBody()))) {
                JSONObject e = new JSONObject(true);
                e.put("topic", m.getTopic());
                e.put("queueId", m.getQueueId());
                e.put("queueOffset", m.getQueueOffset());
                e.put("uniqKey", m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX));
                e.put("reconsumeTimes", m.getReconsumeTimes());
                e.put("commitLogOffset", m.getCommitLogOffset());
                msgs.add(e);
            }
        }
        o.put("messages", msgs);
        return o;
    }

    private static Long longOf(String s) {
        return s == null ? null : Long.valueOf(s);
    }

    /** PullRequestHoldService#checkHoldRequest once (the model's `hold`), the woken requests run
     * (pullMessageExecutor is the harness's queue), and every answer a held pull got since the
     * last `pullHeld`, each with its request. */
    JSONObject held() throws Exception {
        Object hold = broker.controller.getPullRequestHoldService();
        java.lang.reflect.Method m = org.apache.rocketmq.broker.longpolling.PullRequestHoldService.class
            .getDeclaredMethod("checkHoldRequest");
        m.setAccessible(true);
        m.invoke(hold);
        for (Runnable task = broker.woken.next(); task != null; task = broker.woken.next()) {
            task.run();
            broker.settleStore();
        }
        for (Map.Entry<String, EmbeddedChannel> e : channels.entrySet()) {
            stash(e.getKey(), e.getValue());
        }
        JSONArray answers = new JSONArray();
        for (Object[] a : early) {
            RemotingCommand r = (RemotingCommand) a[1];
            JSONObject key = sent.remove(r.getOpaque());
            JSONObject o = new JSONObject(true);
            o.put("request", key);
            o.put("clientId", a[0]);
            o.put("response", pullAnswer(r));
            answers.add(o);
        }
        early.clear();
        JSONObject o = new JSONObject(true);
        o.put("woken", answers);
        o.put("stillHeld", sent.size());
        return o;
    }

    /** Committed offsets of the group and the queue ranges of the named topics. */
    JSONObject state(JSONObject req) throws Exception {
        String group = group(req);
        JSONArray topics = req.getJSONArray("topics");
        JSONObject o = new JSONObject(true);
        JSONObject offsets = new JSONObject(true);
        Map<String, ? extends Map<Integer, Long>> table = broker.controller.getConsumerOffsetManager().getOffsetTable();
        for (String key : new java.util.TreeSet<>(table.keySet())) {
            if (!key.endsWith("@" + group)) {
                continue;
            }
            JSONObject q = new JSONObject(true);
            for (Map.Entry<Integer, Long> e : new TreeMap<>(table.get(key)).entrySet()) {
                q.put(String.valueOf(e.getKey()), e.getValue());
            }
            offsets.put(key, q);
        }
        o.put("offsets", offsets);
        JSONObject ranges = new JSONObject(true);
        for (Object t : topics == null ? new JSONArray() : topics) {
            String topic = (String) t;
            org.apache.rocketmq.common.TopicConfig tc = broker.controller.getTopicConfigManager().selectTopicConfig(topic);
            JSONArray arr = new JSONArray();
            int n = tc == null ? 0 : tc.getReadQueueNums();
            for (int q = 0; q < n; q++) {
                JSONObject e = new JSONObject(true);
                e.put("queueId", q);
                e.put("min", broker.store.getMinOffsetInQueue(topic, q));
                e.put("max", broker.store.getMaxOffsetInQueue(topic, q));
                arr.add(e);
            }
            ranges.put(topic, arr);
        }
        o.put("topics", ranges);
        o.put("now", VirtualClock.get());
        return o;
    }
}
