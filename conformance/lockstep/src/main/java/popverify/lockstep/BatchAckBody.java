package popverify.lockstep;

import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * BATCH_ACK_MESSAGE's body as the client builds it (MQClientAPIImpl#batchAckMessageAsync, 5.1+):
 * handles grouped by retry@queueId@ckQueueOffset@popTime into BatchAck records with a bit per
 * acked offset, in a BatchAckMessageRequestBody carrying the first handle's broker name. Reached
 * by reflection: the classes do not exist in 5.0.0.
 */
final class BatchAckBody {
    private BatchAckBody() {
    }

    static byte[] encode(String group, String topic, JSONArray entries) throws Exception {
        Class<?> util = ExtraInfo.util();
        Method split = util.getMethod("split", String.class);
        Class<?> batchAck = Class.forName("org.apache.rocketmq.remoting.protocol.body.BatchAck");
        Class<?> bodyClass = Class.forName("org.apache.rocketmq.remoting.protocol.body.BatchAckMessageRequestBody");
        String brokerName = null;
        Map<String, Object> byKey = new HashMap<>();  // HashMap as the client: its value order is the body's order
        for (int i = 0; i < entries.size(); i++) {
            JSONObject e = entries.getJSONObject(i);
            String handle = Lockstep.required(e, "extraInfo");
            String[] d = (String[]) split.invoke(null, handle);
            if (brokerName == null) {
                brokerName = (String) get(util, "getBrokerName", d);
            }
            String retry = (String) get(util, "getRetry", d);
            int queueId = ((Number) get(util, "getQueueId", d)).intValue();
            long ckQueueOffset = ((Number) get(util, "getCkQueueOffset", d)).longValue();
            long popTime = ((Number) get(util, "getPopTime", d)).longValue();
            String key = retry + "@" + queueId + "@" + ckQueueOffset + "@" + popTime;
            Object ack = byKey.get(key);
            if (ack == null) {
                ack = batchAck.getConstructor().newInstance();
                batchAck.getMethod("setConsumerGroup", String.class).invoke(ack, group);
                batchAck.getMethod("setTopic", String.class).invoke(ack, topic);
                batchAck.getMethod("setRetry", String.class).invoke(ack, retry);
                batchAck.getMethod("setStartOffset", long.class).invoke(ack, ckQueueOffset);
                batchAck.getMethod("setQueueId", int.class).invoke(ack, queueId);
                batchAck.getMethod("setReviveQueueId", int.class).invoke(ack, ((Number) get(util, "getReviveQid", d)).intValue());
                batchAck.getMethod("setPopTime", long.class).invoke(ack, popTime);
                batchAck.getMethod("setInvisibleTime", long.class).invoke(ack, ((Number) get(util, "getInvisibleTime", d)).longValue());
                batchAck.getMethod("setBitSet", BitSet.class).invoke(ack, new BitSet());
                byKey.put(key, ack);
            }
            BitSet bits = (BitSet) batchAck.getMethod("getBitSet").invoke(ack);
            bits.set((int) (((Number) get(util, "getQueueOffset", d)).longValue() - ckQueueOffset));
        }
        Object body = bodyClass.getConstructor().newInstance();
        bodyClass.getMethod("setBrokerName", String.class).invoke(body, brokerName);
        bodyClass.getMethod("setAcks", java.util.List.class).invoke(body, new ArrayList<>(byKey.values()));
        return (byte[]) bodyClass.getMethod("encode").invoke(body);
    }

    private static Object get(Class<?> util, String getter, String[] d) throws Exception {
        return util.getMethod(getter, String[].class).invoke(null, (Object) d);
    }
}
