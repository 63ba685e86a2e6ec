package popverify.conformance;

import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import org.apache.rocketmq.client.impl.consumer.ProcessQueue;
import org.apache.rocketmq.common.KeyBuilder;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.store.pop.AckMsg;
import org.apache.rocketmq.store.pop.PopCheckPoint;

/**
 * popverify's conformance harness: JSON requests on stdin, one JSON answer per line on stdout,
 * each computed by RocketMQ's own classes (the version on the classpath). Only this class is
 * ours; everything it calls is RocketMQ's code. Classes that moved between versions
 * (ExtraInfoUtil, BatchAckMsg, QueryAssignmentProcessor) and the records' JSON library
 * (fastjson on 5.0.0, fastjson2 on 5.5.0) are reached by reflection.
 */
public final class Harness {
    private Harness() {
    }

    public static void main(String[] args) throws Exception {
        // RocketMQ's loggers would write to stdout; the protocol owns it.
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            JSONObject answer = new JSONObject();
            try {
                answer.put("ok", handle(JSON.parseObject(line)));
            } catch (Throwable e) {
                Throwable cause = e instanceof java.lang.reflect.InvocationTargetException ? e.getCause() : e;
                answer.put("error", cause.getClass().getSimpleName());
            }
            out.println(answer.toJSONString());
        }
    }

    static Object handle(JSONObject req) throws Exception {
        switch (req.getString("op")) {
            case "version":
                return org.apache.rocketmq.common.MQVersion.getVersionDesc(org.apache.rocketmq.common.MQVersion.CURRENT_VERSION);
            case "allocate":
                return queues(strategy(req.getString("strategy")).allocate(req.getString("group"), req.getString("cid"),
                    mqs(req.getJSONArray("mqs")), strings(req.getJSONArray("cids"))));
            case "allocate4pop":
                return queues(allocate4Pop(req));
            case "pq":
                return processQueue(req.getJSONArray("ops"));
            case "ck":
                return checkpoint(req);
            case "ack":
                return ack(req);
            case "extra":
                return extraInfo(req);
            case "keys":
                return keys(req);
            default:
                throw new IllegalArgumentException("unknown op");
        }
    }

    static AllocateMessageQueueStrategy strategy(String name) {
        switch (name) {
            case "AVG":
                return new AllocateMessageQueueAveragely();
            case "AVG_BY_CIRCLE":
                return new AllocateMessageQueueAveragelyByCircle();
            case "CONSISTENT_HASH":
                return new AllocateMessageQueueConsistentHash();
            default:
                throw new IllegalArgumentException(name);
        }
    }

    static List<MessageQueue> mqs(JSONArray array) {
        List<MessageQueue> out = new ArrayList<>();
        for (int i = 0; i < array.size(); i++) {
            JSONArray mq = array.getJSONArray(i);
            out.add(new MessageQueue(mq.getString(0), mq.getString(1), mq.getIntValue(2)));
        }
        return out;
    }

    static List<String> strings(JSONArray array) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < array.size(); i++) {
            out.add(array.getString(i));
        }
        return out;
    }

    static JSONArray queues(List<MessageQueue> mqs) {
        JSONArray out = new JSONArray();
        for (MessageQueue mq : mqs) {
            JSONArray one = new JSONArray();
            one.add(mq.getTopic());
            one.add(mq.getBrokerName());
            one.add(mq.getQueueId());
            out.add(one);
        }
        return out;
    }

    /** QueryAssignmentProcessor#allocate4Pop on an instance made without its constructor (which
     *  needs a running BrokerController); allocate4Pop itself reads no field. */
    @SuppressWarnings("unchecked")
    static List<MessageQueue> allocate4Pop(JSONObject req) throws Exception {
        Class<?> cls = Class.forName("org.apache.rocketmq.broker.processor.QueryAssignmentProcessor");
        Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        f.setAccessible(true);
        Object unsafe = f.get(null);
        Object processor = unsafe.getClass().getMethod("allocateInstance", Class.class).invoke(unsafe, cls);
        Method m = cls.getDeclaredMethod("allocate4Pop", AllocateMessageQueueStrategy.class, String.class, String.class,
            List.class, List.class, int.class);
        m.setAccessible(true);
        return (List<MessageQueue>) m.invoke(processor, strategy(req.getString("strategy")), req.getString("group"),
            req.getString("cid"), mqs(req.getJSONArray("mqs")), strings(req.getJSONArray("cids")), req.getIntValue("share"));
    }

    static List<MessageExt> messages(JSONArray array) {
        List<MessageExt> out = new ArrayList<>();
        for (int i = 0; i < array.size(); i++) {
            JSONArray m = array.getJSONArray(i);
            MessageExt msg = new MessageExt();
            msg.setQueueOffset(m.getLongValue(0));
            msg.setBody(new byte[m.getIntValue(1)]);
            if (m.size() > 2 && m.get(2) != null) {
                MessageAccessor.putProperty(msg, MessageConst.PROPERTY_MAX_OFFSET, m.getString(2));
            }
            out.add(msg);
        }
        return out;
    }

    static JSONArray processQueue(JSONArray ops) throws Exception {
        ProcessQueue pq = new ProcessQueue();
        Field offsetMax = ProcessQueue.class.getDeclaredField("queueOffsetMax");
        offsetMax.setAccessible(true);
        Field consuming = ProcessQueue.class.getDeclaredField("consumingMsgOrderlyTreeMap");
        consuming.setAccessible(true);
        JSONArray out = new JSONArray();
        for (int i = 0; i < ops.size(); i++) {
            JSONObject op = ops.getJSONObject(i);
            JSONObject obs = new JSONObject();
            try {
                switch (op.getString("k")) {
                    case "put":
                        obs.put("ret", pq.putMessage(messages(op.getJSONArray("msgs"))));
                        break;
                    case "remove":
                        obs.put("ret", pq.removeMessage(messages(op.getJSONArray("msgs"))));
                        break;
                    case "take": {
                        JSONArray taken = new JSONArray();
                        for (MessageExt m : pq.takeMessages(op.getIntValue("n"))) {
                            taken.add(m.getQueueOffset());
                        }
                        obs.put("ret", taken);
                        break;
                    }
                    case "commit":
                        obs.put("ret", pq.commit());
                        break;
                    case "rollback":
                        pq.rollback();
                        break;
                    case "again":
                        pq.makeMessageToConsumeAgain(messages(op.getJSONArray("msgs")));
                        break;
                    case "clear":
                        pq.clear();
                        break;
                    default:
                        throw new IllegalArgumentException(op.getString("k"));
                }
            } catch (Exception e) {
                obs.put("error", e.getClass().getSimpleName());
            }
            obs.put("count", pq.getMsgCount().get());
            obs.put("size", pq.getMsgSize().get());
            obs.put("span", pq.getMaxSpan());
            obs.put("offsetMax", offsetMax.get(pq));
            obs.put("keys", new ArrayList<>(pq.getMsgTreeMap().keySet()));
            obs.put("consuming", new ArrayList<>(((TreeMap<Long, MessageExt>) consuming.get(pq)).keySet()));
            obs.put("accCnt", pq.getMsgAccCnt());
            obs.put("hasTemp", pq.hasTempMessage());
            out.add(obs);
        }
        return out;
    }

    /** The JSON library RocketMQ writes and reads its pop records with: the one whose JSONField
     *  annotates PopCheckPoint. fastjson on 5.0.0; fastjson2 on 5.5.0, whose store classes import
     *  com.alibaba.fastjson2.annotation.JSONField (PopCheckPoint.java:19) and whose broker writes
     *  with com.alibaba.fastjson2.JSON (PopMessageProcessor.java:19, :945; AckMessageProcessor.java:293).
     *  Serialising with the other library ignores the annotations (bean names, no "rp"/"sp"). */
    static Class<?> recordJson() throws Exception {
        for (java.lang.annotation.Annotation a : PopCheckPoint.class.getDeclaredField("startOffset").getAnnotations()) {
            if (a.annotationType().getName().startsWith("com.alibaba.fastjson2.")) {
                return Class.forName("com.alibaba.fastjson2.JSON");
            }
        }
        return JSON.class;
    }

    static String toRecordJson(Object record) throws Exception {
        return (String) recordJson().getMethod("toJSONString", Object.class).invoke(null, record);
    }

    static <T> T parseRecord(String text, Class<T> type) throws Exception {
        return type.cast(recordJson().getMethod("parseObject", String.class, Class.class).invoke(null, text, type));
    }

    static Method optionalMethod(Class<?> type, String name, Class<?>... params) {
        try {
            return type.getMethod(name, params);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    static JSONObject checkpoint(JSONObject req) throws Exception {
        PopCheckPoint ck = new PopCheckPoint();
        ck.setStartOffset(req.getLongValue("so"));
        ck.setPopTime(req.getLongValue("pt"));
        ck.setInvisibleTime(req.getLongValue("it"));
        ck.setBitMap(req.getIntValue("bm"));
        ck.setNum((byte) req.getIntValue("n"));
        for (Method m : PopCheckPoint.class.getMethods()) {  // byte on 5.0.0, int later
            if (m.getName().equals("setQueueId")) {
                Class<?> type = m.getParameterTypes()[0];
                m.invoke(ck, type == byte.class ? (Object) (byte) req.getIntValue("q") : (Object) req.getIntValue("q"));
            }
        }
        ck.setTopic(req.getString("t"));
        ck.setCId(req.getString("c"));
        ck.setReviveOffset(req.getLongValue("ro"));
        ck.setBrokerName(req.getString("bn"));
        // rePutTimes and suspend exist on 5.5.0, not on 5.0.0: set them only where the class has them.
        Method setRePutTimes = optionalMethod(PopCheckPoint.class, "setRePutTimes", String.class);
        if (setRePutTimes != null) {
            setRePutTimes.invoke(ck, req.getString("rp"));
        }
        Method setSuspend = optionalMethod(PopCheckPoint.class, "setSuspend", boolean.class);
        if (setSuspend != null) {
            setSuspend.invoke(ck, req.getBooleanValue("sp"));
        }
        JSONArray diffs = req.getJSONArray("d");
        if (diffs != null) {
            for (int i = 0; i < diffs.size(); i++) {
                ck.addDiff(diffs.getIntValue(i));
            }
        }
        JSONObject out = new JSONObject();
        out.put("json", toRecordJson(ck));
        JSONArray index = new JSONArray();
        for (Object probe : req.getJSONArray("probes")) {
            index.add(ck.indexOfAck(((Number) probe).longValue()));
        }
        out.put("indexOfAck", index);
        JSONArray byIndex = new JSONArray();
        for (int i = 0; i < (diffs == null ? 0 : diffs.size()); i++) {
            byIndex.add(ck.ackOffsetByIndex((byte) i));
        }
        out.put("ackOffsetByIndex", byIndex);
        out.put("reviveTime", ck.getReviveTime());
        Method parseRePutTimes = optionalMethod(PopCheckPoint.class, "parseRePutTimes");
        if (parseRePutTimes != null) {
            out.put("parseRePutTimes", parseRePutTimes.invoke(ck));
        }
        PopCheckPoint parsed = parseRecord(toRecordJson(ck), PopCheckPoint.class);
        out.put("roundTrip", toRecordJson(parsed));
        return out;
    }

    static JSONObject ack(JSONObject req) throws Exception {
        AckMsg ack;
        if (req.getBooleanValue("batch")) {
            ack = (AckMsg) Class.forName("org.apache.rocketmq.store.pop.BatchAckMsg").getConstructor().newInstance();
            List<Long> offsets = new ArrayList<>();
            for (Object o : req.getJSONArray("aol")) {
                offsets.add(((Number) o).longValue());
            }
            ack.getClass().getMethod("setAckOffsetList", List.class).invoke(ack, offsets);
        } else {
            ack = new AckMsg();
            ack.setAckOffset(req.getLongValue("ao"));
        }
        ack.setStartOffset(req.getLongValue("so"));
        ack.setConsumerGroup(req.getString("c"));
        ack.setTopic(req.getString("t"));
        ack.setQueueId(req.getIntValue("q"));
        ack.setPopTime(req.getLongValue("pt"));
        ack.setBrokerName(req.getString("bn"));
        JSONObject out = new JSONObject();
        out.put("json", toRecordJson(ack));
        if (req.containsKey("reread")) {  // a body in either spelling, read as the revive service reads it
            out.put("reread", toRecordJson(parseRecord(req.getString("reread"), AckMsg.class)));
        }
        return out;
    }

    static Class<?> extraInfoUtil() throws ClassNotFoundException {
        try {
            return Class.forName("org.apache.rocketmq.common.protocol.header.ExtraInfoUtil");      // 5.0.0
        } catch (ClassNotFoundException e) {
            return Class.forName("org.apache.rocketmq.remoting.protocol.header.ExtraInfoUtil");    // 5.1+
        }
    }

    static JSONObject extraInfo(JSONObject req) throws Exception {
        Class<?> u = extraInfoUtil();
        JSONObject out = new JSONObject();
        String built;
        if (req.containsKey("msgOffset")) {
            built = (String) u.getMethod("buildExtraInfo", long.class, long.class, long.class, int.class, String.class,
                String.class, int.class, long.class).invoke(null, req.getLongValue("ckOffset"), req.getLongValue("popTime"),
                req.getLongValue("invisibleTime"), req.getIntValue("reviveQid"), req.getString("topic"),
                req.getString("brokerName"), req.getIntValue("queueId"), req.getLongValue("msgOffset"));
        } else {
            built = (String) u.getMethod("buildExtraInfo", long.class, long.class, long.class, int.class, String.class,
                String.class, int.class).invoke(null, req.getLongValue("ckOffset"), req.getLongValue("popTime"),
                req.getLongValue("invisibleTime"), req.getIntValue("reviveQid"), req.getString("topic"),
                req.getString("brokerName"), req.getIntValue("queueId"));
        }
        out.put("built", built);
        String handle = req.containsKey("handle") ? req.getString("handle") : built;
        String[] parts = (String[]) u.getMethod("split", String.class).invoke(null, handle);
        out.put("split", parts);
        for (String getter : new String[] {"getCkQueueOffset", "getPopTime", "getInvisibleTime", "getReviveQid",
            "getBrokerName", "getQueueId", "getQueueOffset"}) {
            try {
                out.put(getter, u.getMethod(getter, String[].class).invoke(null, (Object) parts));
            } catch (java.lang.reflect.InvocationTargetException e) {
                out.put(getter, "error:" + e.getCause().getClass().getSimpleName());
            }
        }
        try {
            out.put("getRealTopic", u.getMethod("getRealTopic", String[].class, String.class, String.class)
                .invoke(null, parts, req.getString("topic"), req.getString("cid")));
        } catch (java.lang.reflect.InvocationTargetException e) {
            out.put("getRealTopic", "error:" + e.getCause().getClass().getSimpleName());
        }
        return out;
    }

    static JSONObject keys(JSONObject req) {
        JSONObject out = new JSONObject();
        String topic = req.getString("topic");
        String cid = req.getString("cid");
        String retry = KeyBuilder.buildPopRetryTopic(topic, cid);
        out.put("retry", retry);
        out.put("normal", KeyBuilder.parseNormalTopic(retry, cid));
        out.put("normalOfPlain", KeyBuilder.parseNormalTopic(topic, cid));
        out.put("polling", KeyBuilder.buildPollingKey(topic, cid, req.getIntValue("queueId")));
        return out;
    }
}
