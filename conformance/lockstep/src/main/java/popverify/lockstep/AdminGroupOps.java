package popverify.lockstep;

import com.alibaba.fastjson.JSONObject;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import org.apache.rocketmq.broker.processor.AdminBrokerProcessor;
import org.apache.rocketmq.broker.processor.ConsumerManageProcessor;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * An admin's requests on a consumer group (spec/profiles.md "Group deletion and offset reset";
 * the model's popverify/sim/admin.py). Requests:
 *
 * <ul>
 *   <li>{@code deleteGroup} {group?, cleanOffset}: DELETE_SUBSCRIPTIONGROUP (207) through
 *       AdminBrokerProcessor#processRequest (deleteSubscriptionGroup). Answer {code}.</li>
 *   <li>{@code resetOffset} {topic?, group?, queueId, offset, serverSide}: one queue of the
 *       group reset to {@code offset}. serverSide (the profile's server_side_reset_offset):
 *       INVOKE_BROKER_TO_RESET_OFFSET (222) with queueId and offset, as 5.5.0's mqadmin sends
 *       it (AdminBrokerProcessor#resetOffset → resetOffsetInner); otherwise UPDATE_CONSUMER_OFFSET
 *       (15) through ConsumerManageProcessor, what 5.0.0's mqadmin resetOffsetByTime -b -q sends
 *       (DefaultMQAdminExtImpl#resetOffsetByQueueId). Answer {code}.</li>
 *   <li>{@code createGroup} {group?} (revive5): a new SubscriptionGroupConfig of the group, what
 *       UPDATE_AND_CREATE_SUBSCRIPTIONGROUP stores (AdminBrokerProcessor#updateAndCreateSubscriptionGroup
 *       → SubscriptionGroupManager#updateSubscriptionGroupConfig); with autoCreateSubscriptionGroup
 *       off the admin creates the run's group so. Answer {code: 0}.</li>
 * </ul>
 */
final class AdminGroupOps {
    private static final int UPDATE_CONSUMER_OFFSET = 15;
    private static final int DELETE_SUBSCRIPTIONGROUP = 207;
    private static final int INVOKE_BROKER_TO_RESET_OFFSET = 222;

    private AdminGroupOps() {
    }

    static Object handle(Lockstep.Broker b, String op, JSONObject req) throws Exception {
        String group = req.getString("group") == null ? Lockstep.GROUP : req.getString("group");
        Map<String, String> f = new HashMap<>();
        if (op.equals("createGroup")) {
            Class<?> cls = AdminPermOps.groupConfigClass();
            Object config = cls.getConstructor().newInstance();
            cls.getMethod("setGroupName", String.class).invoke(config, group);
            Object manager = b.controller.getSubscriptionGroupManager();
            Method update = manager.getClass().getMethod("updateSubscriptionGroupConfig", cls);
            update.invoke(manager, config);
            JSONObject o = new JSONObject(true);
            o.put("code", 0);
            return o;
        }
        if (op.equals("deleteGroup")) {
            f.put("groupName", group);
            f.put("cleanOffset", String.valueOf(req.getBooleanValue("cleanOffset")));
            return codeOf(b.call(new AdminBrokerProcessor(b.controller), b.request(DELETE_SUBSCRIPTIONGROUP, f)));
        }
        String topic = req.getString("topic") == null ? Lockstep.TOPIC : req.getString("topic");
        String queueId = String.valueOf(Lockstep.bounded(req, "queueId", -1, 0, 1023));
        String offset = String.valueOf(Lockstep.boundedLong(req, "offset", -1, 0, Long.MAX_VALUE));
        if (req.getBooleanValue("serverSide")) {
            f.put("topic", topic);
            f.put("group", group);
            f.put("queueId", queueId);
            f.put("offset", offset);
            f.put("timestamp", "-1");
            f.put("isForce", "true");
            return codeOf(b.call(new AdminBrokerProcessor(b.controller), b.request(INVOKE_BROKER_TO_RESET_OFFSET, f)));
        }
        f.put("consumerGroup", group);
        f.put("topic", topic);
        f.put("queueId", queueId);
        f.put("commitOffset", offset);
        return codeOf(b.call(new ConsumerManageProcessor(b.controller), b.request(UPDATE_CONSUMER_OFFSET, f)));
    }

    private static JSONObject codeOf(RemotingCommand r) {
        JSONObject o = new JSONObject(true);
        o.put("code", r == null ? null : r.getCode());
        return o;
    }
}
