package popverify.lockstep;

import com.alibaba.fastjson.JSONObject;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.constant.PermName;

/**
 * An admin's permission changes before a POP of popverify/sim/pop_shapes.py (topic_unreadable,
 * group_disabled), made the way AdminBrokerProcessor's handlers store them. Requests:
 *
 * <ul>
 *   <li>{@code writeOnlyTopic} {topic}: the topic with one queue and perm PERM_WRITE
 *       (updateAndCreateTopic → TopicConfigManager#updateTopicConfig). Answer {}.</li>
 *   <li>{@code disableGroup} {group}: the group with consumeEnable false
 *       (updateAndCreateSubscriptionGroup → SubscriptionGroupManager#updateSubscriptionGroupConfig).
 *       Answer {}.</li>
 * </ul>
 */
final class AdminPermOps {
    /** SubscriptionGroupConfig's package: rocketmq-common at 5.0.0, rocketmq-remoting at 5.5.0. */
    private static final String[] GROUP_CONFIG = {
        "org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig",
        "org.apache.rocketmq.common.subscription.SubscriptionGroupConfig"};

    private AdminPermOps() {
    }

    static Object handle(Lockstep.Broker b, String op, JSONObject req) throws Exception {
        if (op.equals("writeOnlyTopic")) {
            TopicConfig topic = new TopicConfig(Lockstep.required(req, "topic"), 1, 1, PermName.PERM_WRITE);
            b.controller.getTopicConfigManager().updateTopicConfig(topic);
        } else {
            Class<?> cls = groupConfigClass();
            Object group = cls.getConstructor().newInstance();
            cls.getMethod("setGroupName", String.class).invoke(group, Lockstep.required(req, "group"));
            cls.getMethod("setConsumeEnable", boolean.class).invoke(group, false);
            Object manager = b.controller.getSubscriptionGroupManager();
            manager.getClass().getMethod("updateSubscriptionGroupConfig", cls).invoke(manager, group);
        }
        return new JSONObject(true);
    }

    /** SubscriptionGroupConfig of the release the harness runs (AdminGroupOps' createGroup too). */
    static Class<?> groupConfigClass() throws ClassNotFoundException {
        for (String name : GROUP_CONFIG) {
            try {
                return Class.forName(name);
            } catch (ClassNotFoundException e) {
                // the other release's package
            }
        }
        throw new ClassNotFoundException("SubscriptionGroupConfig");
    }
}
