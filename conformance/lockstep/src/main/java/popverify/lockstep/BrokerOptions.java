package popverify.lockstep;

import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.rocketmq.common.BrokerConfig;

/**
 * Broker options (the init request's {@code brokerOptions}; spec/profiles.md "Broker options"):
 * BrokerConfig booleans, false by default, that a run switches on by their Java name
 * (reference/broker/config.py BROKER_OPTIONS), set through the release's own setter
 * ({@code setEnablePopBatchAck(true)} ...), one true by default switched off by
 * {@code <name>=false}, int thresholds set by {@code <name>=<int>} through the int setter
 * (popCkStayBufferTime=3000 ...) or the long one (reviveMaxSlow=1, popLongPollingForceNotifyInterval=1),
 * and a String property set by {@code <name>=<value>}. A name the release's BrokerConfig has no
 * setter of that form for is refused: the model sends only the options the release has.
 */
final class BrokerOptions {
    /** More names than BROKER_OPTIONS will ever hold is a malformed request. */
    static final int MAX_OPTIONS = 16;
    private BrokerOptions() {
    }

    /** The option names of an init request (none when absent). */
    static List<String> parse(JSONObject req) {
        JSONArray names = req.getJSONArray("brokerOptions");
        if (names == null) {
            return Collections.emptyList();
        }
        if (names.size() > MAX_OPTIONS) {
            throw new IllegalArgumentException("brokerOptions: at most " + MAX_OPTIONS + " names");
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            String name = names.getString(i);
            if (name == null || name.isEmpty() || !Character.isLowerCase(name.charAt(0))) {
                throw new IllegalArgumentException("brokerOptions: not a BrokerConfig property name: " + name);
            }
            out.add(name);
        }
        return Collections.unmodifiableList(out);
    }

    /** Switches every named option on; one named {@code <name>=false} off (a boolean whose
     * default is true: enableNotifyAfterPopOrderLockRelease); {@code <name>=<int>} of an int (or
     * long) setter sets that number; {@code <name>=<value>} of a String setter passes it the
     * value, as broker.conf does (defaultMessageRequestMode=POP: the setter parses the enum). */
    static void apply(BrokerConfig bc, List<String> names) {
        for (String option : names) {
            int eq = option.indexOf('=');
            String name = eq < 0 ? option : option.substring(0, eq);
            String value = eq < 0 ? "true" : option.substring(eq + 1);
            String setter = "set" + Character.toUpperCase(name.charAt(0)) + name.substring(1);
            Method m = null;
            for (Method candidate : BrokerConfig.class.getMethods()) {
                if (candidate.getName().equals(setter) && candidate.getParameterCount() == 1) {
                    m = candidate;
                }
            }
            Class<?> type = m == null ? null : m.getParameterTypes()[0];
            Object arg;
            if (type == boolean.class && (value.equals("true") || value.equals("false"))) {
                arg = Boolean.valueOf(value);
            } else if (type == int.class && eq >= 0) {
                arg = parseInt(value, option);
            } else if (type == long.class && eq >= 0) {
                // reviveMaxSlow=1, popLongPollingForceNotifyInterval (their setters take a long)
                arg = (long) parseInt(value, option);
            } else if (type == String.class && eq >= 0) {
                arg = value;
            } else {
                throw new IllegalArgumentException("brokerOptions: this release's BrokerConfig has no "
                    + form(eq, value) + " " + name);
            }
            try {
                m.invoke(bc, arg);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("brokerOptions: " + setter + " failed", e);
            }
        }
    }

    /** The setter type an option's form asks for: a bare name or true/false a boolean, digits an int. */
    private static String form(int eq, String value) {
        if (eq < 0 || value.equals("true") || value.equals("false")) {
            return "boolean";
        }
        return !value.isEmpty() && value.chars().allMatch(Character::isDigit) ? "int" : "String";
    }

    private static int parseInt(String value, String option) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("brokerOptions: not <name>=false or <name>=<int>: " + option);
        }
    }
}
