package popverify.lockstep;

import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.rocketmq.common.BrokerConfig;

/**
 * Broker options (the init request's {@code brokerOptions}; spec/profiles.md "Broker options"):
 * BrokerConfig booleans, false by default, that a run switches on by their Java name
 * (reference/broker/config.py BROKER_OPTIONS), set through the release's own setter
 * ({@code setEnablePopBatchAck(true)} ...), and one true by default switched off by
 * {@code <name>=false}, and int thresholds set by {@code <name>=<int>} through the int setter
 * (popCkStayBufferTime=3000 ...). A name the release's BrokerConfig has no setter of that type for
 * is refused: the model sends only the options the release has.
 */
final class BrokerOptions {
    /** More names than BROKER_OPTIONS will ever hold is a malformed request. */
    static final int MAX_OPTIONS = 16;
    /** reference/broker/config.py OFF_SUFFIX. */
    static final String OFF_SUFFIX = "=false";

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
     * default is true: enableNotifyAfterPopOrderLockRelease); {@code <name>=<int>} sets an int. */
    static void apply(BrokerConfig bc, List<String> names) {
        for (String option : names) {
            boolean off = option.endsWith(OFF_SUFFIX);
            int eq = option.indexOf('=');
            String name = eq < 0 ? option : option.substring(0, eq);
            Integer threshold = eq < 0 || off ? null : parseInt(option.substring(eq + 1), option);
            String setter = "set" + Character.toUpperCase(name.charAt(0)) + name.substring(1);
            try {
                if (threshold != null) {
                    BrokerConfig.class.getMethod(setter, int.class).invoke(bc, threshold);
                } else {
                    BrokerConfig.class.getMethod(setter, boolean.class).invoke(bc, !off);
                }
            } catch (NoSuchMethodException e) {
                throw new IllegalArgumentException("brokerOptions: this release's BrokerConfig has no "
                    + (threshold != null ? "int " : "boolean ") + name);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("brokerOptions: " + setter + " failed", e);
            }
        }
    }

    private static int parseInt(String value, String option) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("brokerOptions: not <name>=false or <name>=<int>: " + option);
        }
    }
}
