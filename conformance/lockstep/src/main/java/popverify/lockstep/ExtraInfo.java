package popverify.lockstep;

import java.lang.reflect.Method;

/** ExtraInfoUtil (org.apache.rocketmq.common.protocol.header on 5.0.0, remoting.protocol.header
 * later), called as the client calls it. */
final class ExtraInfo {
    private static Class<?> util;

    private ExtraInfo() {
    }

    static synchronized Class<?> util() throws ClassNotFoundException {
        if (util == null) {
            util = Reflect.firstClass("org.apache.rocketmq.common.protocol.header.ExtraInfoUtil",
                "org.apache.rocketmq.remoting.protocol.header.ExtraInfoUtil");
        }
        return util;
    }

    static Object call(String name, String arg) throws Exception {
        return util().getMethod(name, String.class).invoke(null, arg);
    }

    /** getStartOffsetInfoMapKey(topic, queueId): (String, int) on 5.0.0, (String, long) later. */
    static String mapKey(String topic, int queueId) throws Exception {
        for (Method m : util().getMethods()) {
            if (m.getName().equals("getStartOffsetInfoMapKey") && m.getParameterCount() == 2) {
                Class<?> t = m.getParameterTypes()[1];
                return (String) m.invoke(null, topic, t == long.class ? (Object) (long) queueId : (Object) queueId);
            }
        }
        throw new NoSuchMethodException("getStartOffsetInfoMapKey");
    }

    static String build8(long ckQueueOffset, long popTime, long invisibleTime, int reviveQid, String topic, String brokerName,
                         int queueId, long msgQueueOffset) throws Exception {
        return (String) util().getMethod("buildExtraInfo", long.class, long.class, long.class, int.class, String.class,
            String.class, int.class, long.class).invoke(null, ckQueueOffset, popTime, invisibleTime, reviveQid, topic,
            brokerName, queueId, msgQueueOffset);
    }

    static String build7(long ckQueueOffset, long popTime, long invisibleTime, int reviveQid, String topic, String brokerName,
                         int queueId) throws Exception {
        return (String) util().getMethod("buildExtraInfo", long.class, long.class, long.class, int.class, String.class,
            String.class, int.class).invoke(null, ckQueueOffset, popTime, invisibleTime, reviveQid, topic, brokerName, queueId);
    }

    static String realTopic(String handle, String topic, String group) throws Exception {
        String[] parts = (String[]) util().getMethod("split", String.class).invoke(null, handle);
        return (String) util().getMethod("getRealTopic", String[].class, String.class, String.class)
            .invoke(null, parts, topic, group);
    }
}
