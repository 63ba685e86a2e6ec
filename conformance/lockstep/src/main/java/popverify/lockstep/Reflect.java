package popverify.lockstep;

import java.lang.reflect.Field;
import java.lang.reflect.Method;

/** Reflection helpers for RocketMQ internals that are private or moved between releases. */
final class Reflect {
    private Reflect() {
    }

    static Field field(Class<?> c, String name) throws NoSuchFieldException {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            try {
                Field f = k.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        throw new NoSuchFieldException(c.getName() + "." + name);
    }

    static Object get(Object target, String name) throws Exception {
        return field(target.getClass(), name).get(target);
    }

    static void set(Object target, String name, Object value) throws Exception {
        field(target.getClass(), name).set(target, value);
    }

    /** Sets a (possibly final) instance field: PopMessageProcessor#random is final on 5.5.0. */
    static void setFinal(Object target, Field f, Object value) throws Exception {
        f.setAccessible(true);
        f.set(target, value);
    }

    static Object invoke(Object target, String name) throws Exception {
        for (Class<?> k = target.getClass(); k != null; k = k.getSuperclass()) {
            for (Method m : k.getDeclaredMethods()) {
                if (m.getName().equals(name) && m.getParameterCount() == 0) {
                    m.setAccessible(true);
                    return m.invoke(target);
                }
            }
        }
        throw new NoSuchMethodException(target.getClass().getName() + "#" + name);
    }

    static Method method(Class<?> c, String name, Class<?>... types) throws NoSuchMethodException {
        Method m = c.getMethod(name, types);
        m.setAccessible(true);
        return m;
    }

    static Class<?> firstClass(String... names) throws ClassNotFoundException {
        for (String n : names) {
            try {
                return Class.forName(n);
            } catch (ClassNotFoundException e) {
                // try the next location (classes moved between releases)
            }
        }
        throw new ClassNotFoundException(String.join(" | ", names));
    }
}
