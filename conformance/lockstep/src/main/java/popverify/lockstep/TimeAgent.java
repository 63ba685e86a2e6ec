package popverify.lockstep;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.HashMap;
import java.util.Map;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * Java agent (premain) that gives RocketMQ a virtual clock: inside org.apache.rocketmq.* every
 * call of System.currentTimeMillis() becomes VirtualClock.currentTimeMillis(); in
 * PopReviveService, DefaultMessageStore#shutdown and PopBufferMergeService#run, Thread.sleep
 * becomes VirtualClock.sleep (no wait); in PopMessageProcessor
 * the popTime read becomes Hooks.popTime(), each popMsgFromQueue begins with
 * Hooks.beforeVisit() and each QueueLockManager#unLock call is preceded by Hooks.beforeUnlock();
 * in the four classes that put the consumption path's messages
 * (PopBufferMergeService, AckMessageProcessor, ChangeInvisibleTimeProcessor, PopReviveService)
 * EscapeBridge#putMessageToSpecificQueue / #asyncPutMessageToSpecificQueue and, in
 * PopReviveService, MessageStore#putMessage become PutRefusal's static counterparts (the
 * receiver becomes the first argument: same stack shape); PopBufferMergeService#scan's last
 * clock read (its eclipse) becomes ScanStall.eclipseNow(); in the run() loops of
 * PopBufferMergeService and PopReviveService, isStopped, waitForRunning and the catch block's
 * logger error call become ServiceLoops' (one pass per request; in the long-polling service's
 * run() the {@code stopped} field read too), and PopReviveService#run's
 * consumeReviveMessage / mergeAndRevive become LockstepAccess' (the round's offsets).
 *
 * <p>One ASM pass at class load with Byte Buddy's repackaged ASM (net.bytebuddy.jar.asm): every
 * rewrite keeps the operand stack shape (a static call replaces a static call of the same
 * descriptor, or a no-argument void call is inserted), so no frames are recomputed. Byte Buddy's
 * AgentBuilder did the same rewrite but cost 5-13 s of start-up (it describes every loaded
 * class through its type pool); the bare ClassFileTransformer costs well under a second.
 *
 * <p>Agent argument: the name of the PopMessageProcessor method(s) holding
 * {@code long popTime = System.currentTimeMillis();} ("processRequest" on 5.0.0 and 5.5.0).
 */
public final class TimeAgent implements ClassFileTransformer {
    private static final String POP = "org/apache/rocketmq/broker/processor/PopMessageProcessor";
    private static final String REVIVE = "org/apache/rocketmq/broker/processor/PopReviveService";
    private static final String STORE = "org/apache/rocketmq/store/DefaultMessageStore";
    private static final String OURS = "org/apache/rocketmq/broker/processor/Lockstep";
    private static final String CLOCK = "popverify/lockstep/VirtualClock";
    private static final String HOOKS = "popverify/lockstep/Hooks";
    private static final String REFUSAL = "popverify/lockstep/PutRefusal";
    private static final String MERGE = "org/apache/rocketmq/broker/processor/PopBufferMergeService";
    private static final String STALL = "popverify/lockstep/ScanStall";
    private static final String LOOPS = "popverify/lockstep/ServiceLoops";
    private static final String ACCESS = "org/apache/rocketmq/broker/processor/LockstepAccess";
    private static final String BRIDGE = "org/apache/rocketmq/broker/failover/EscapeBridge";
    private static final String MESSAGE_STORE = "org/apache/rocketmq/store/MessageStore";
    /** The long-polling service's timeout loop: 5.5.0's class, 5.0.0's inner class. */
    private static final String POLLING_55 = "org/apache/rocketmq/broker/longpolling/PopLongPollingService";
    private static final String POLLING_50 = POP + "$PopLongPollingService";
    /** The consumption path's putting classes and the prefix of their PutRefusal methods. */
    private static final String[][] PUTTERS = {
        {"org/apache/rocketmq/broker/processor/PopBufferMergeService", "buffer"},
        {"org/apache/rocketmq/broker/processor/AckMessageProcessor", "ack"},
        {"org/apache/rocketmq/broker/processor/ChangeInvisibleTimeProcessor", "change"},
        {REVIVE, "revive"},
    };

    private final String popTimeMethod;

    private TimeAgent(String popTimeMethod) {
        this.popTimeMethod = popTimeMethod;
    }

    public static void premain(String args, Instrumentation inst) {
        inst.addTransformer(new TimeAgent(args == null ? "" : args));
    }

    @Override
    public byte[] transform(ClassLoader loader, String name, Class<?> redefined, ProtectionDomain pd, byte[] bytes) {
        if (name == null || !name.startsWith("org/apache/rocketmq/") || name.startsWith(OURS)) {
            return null;
        }
        try {
            ClassReader reader = new ClassReader(bytes);
            Map<String, Integer> popTimeSites = name.equals(POP) ? findPopTime(reader) : new HashMap<>();
            ClassWriter writer = new ClassWriter(reader, 0);
            boolean[] changed = {false};
            reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
                @Override
                public MethodVisitor visitMethod(int access, String m, String desc, String sig, String[] exc) {
                    MethodVisitor mv = super.visitMethod(access, m, desc, sig, exc);
                    // PopReviveService's tail waits; DefaultMessageStore#shutdown's 3 s grace sleep;
                    // PopBufferMergeService#run's 2 s before its drain (MergeShutdown)
                    boolean noSleep = name.startsWith(REVIVE) || name.equals(STORE) && m.equals("shutdown")
                        || name.equals(MERGE) && m.equals("run");
                    int popTimeSite = popTimeSites.getOrDefault(m + desc, -1);
                    // PopBufferMergeService#scan's eclipse read: its last clock call (ScanStall)
                    int eclipseSite = name.equals(MERGE) && m.equals("scan") && desc.equals("()V")
                        ? clockCalls(bytes, m, desc) - 1 : -1;
                    // the service threads' loops, run one pass per request (ServiceLoops)
                    boolean loop = (name.equals(MERGE) || name.equals(REVIVE) || name.equals(POLLING_55)
                        || name.equals(POLLING_50)) && m.equals("run") && desc.equals("()V");
                    Rewriter rewriter = new Rewriter(mv, noSleep, name, popTimeSite, putter(name), eclipseSite, loop,
                                                     changed);
                    if (name.equals(POP) && m.equals("popMsgFromQueue")) {
                        return new MethodVisitor(Opcodes.ASM9, rewriter) {
                            @Override
                            public void visitCode() {
                                super.visitCode();
                                changed[0] = true;
                                super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "beforeVisit", "()V", false);
                            }
                        };
                    }
                    return rewriter;
                }
            }, 0);
            return changed[0] ? writer.toByteArray() : null;
        } catch (RuntimeException e) {
            // A class we cannot rewrite would run on the wall clock: say so loudly and stop.
            System.err.println("lockstep: cannot rewrite " + name + ": " + e);
            Runtime.getRuntime().halt(3);
            return null;
        }
    }

    /** How many System.currentTimeMillis() calls method ``m`` ``desc`` of the class makes. */
    private static int clockCalls(byte[] bytes, String m, String desc) {
        int[] n = {0};
        new ClassReader(bytes).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String d, String sig, String[] exc) {
                if (!name.equals(m) || !d.equals(desc)) {
                    return null;
                }
                return new MethodVisitor(Opcodes.ASM9) {
                    @Override
                    public void visitMethodInsn(int op, String owner, String n2, String d2, boolean itf) {
                        if (op == Opcodes.INVOKESTATIC && "java/lang/System".equals(owner) && "currentTimeMillis".equals(n2)) {
                            n[0]++;
                        }
                    }
                };
            }
        }, 0);
        return n[0];
    }

    /** The PutRefusal method prefix for a class (or nested class) of PUTTERS, else null. */
    private static String putter(String name) {
        for (String[] p : PUTTERS) {
            if (name.equals(p[0]) || name.startsWith(p[0] + "$")) {
                return p[1];
            }
        }
        return null;
    }

    /** For each method of PopMessageProcessor named by the agent argument: the ordinal of the
     * System.currentTimeMillis() call whose result is stored into the local variable named
     * popTime (`long popTime = System.currentTimeMillis();`), found from the local variable
     * table. Both releases are compiled with it; a class without it gets no popTime hook and
     * the harness reports the interleave point as missed. */
    private Map<String, Integer> findPopTime(ClassReader reader) {
        Map<String, Integer> sites = new HashMap<>();
        reader.accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String m, String desc, String sig, String[] exc) {
                if (!m.equals(popTimeMethod)) {
                    return null;
                }
                return new MethodVisitor(Opcodes.ASM9) {
                    private int calls = -1;
                    private boolean lastWasClock;
                    private final Map<Integer, Integer> storedTo = new HashMap<>();

                    @Override
                    public void visitMethodInsn(int op, String owner, String n, String d, boolean itf) {
                        lastWasClock = op == Opcodes.INVOKESTATIC && "java/lang/System".equals(owner) && "currentTimeMillis".equals(n);
                        if (lastWasClock) {
                            calls++;
                        }
                    }

                    @Override
                    public void visitVarInsn(int op, int var) {
                        if (lastWasClock && op == Opcodes.LSTORE) {
                            storedTo.put(calls, var);
                        }
                        lastWasClock = false;
                    }

                    @Override
                    public void visitInsn(int op) {
                        lastWasClock = false;
                    }

                    @Override
                    public void visitLocalVariable(String n, String d, String s, net.bytebuddy.jar.asm.Label a,
                                                   net.bytebuddy.jar.asm.Label b, int index) {
                        if ("popTime".equals(n)) {
                            for (Map.Entry<Integer, Integer> e : storedTo.entrySet()) {
                                if (e.getValue() == index) {
                                    sites.put(m + desc, e.getKey());
                                }
                            }
                        }
                    }
                };
            }
        }, 0);
        return sites;
    }

    private static final class Rewriter extends MethodVisitor {
        private final String owner;
        private final boolean noSleep;
        private final boolean[] changed;
        private final int popTimeSite;
        private final String putter;
        private final int eclipseSite;
        private final boolean loop;
        private int clockCalls = -1;

        Rewriter(MethodVisitor mv, boolean noSleep, String owner, int popTimeSite, String putter, int eclipseSite,
                 boolean loop, boolean[] changed) {
            super(Opcodes.ASM9, mv);
            this.loop = loop;
            this.putter = putter;
            this.eclipseSite = eclipseSite;
            this.noSleep = noSleep;
            this.owner = owner;
            this.popTimeSite = popTimeSite;
            this.changed = changed;
        }

        @Override
        public void visitMethodInsn(int opcode, String target, String name, String desc, boolean itf) {
            if (loop && loopCall(opcode, target, name, desc)) {
                changed[0] = true;
                return;
            }
            if (putter != null) {
                String with = null;
                if (opcode == Opcodes.INVOKEVIRTUAL && BRIDGE.equals(target) && "putMessageToSpecificQueue".equals(name)) {
                    with = putter + "Put";
                } else if (opcode == Opcodes.INVOKEVIRTUAL && BRIDGE.equals(target)
                    && "asyncPutMessageToSpecificQueue".equals(name)) {
                    with = putter + "PutAsync";
                } else if (opcode == Opcodes.INVOKEINTERFACE && MESSAGE_STORE.equals(target) && "putMessage".equals(name)
                    && "revive".equals(putter)) {
                    with = "reviveStorePut";
                }
                if (with != null) {
                    changed[0] = true;
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, REFUSAL, with, "(L" + target + ";" + desc.substring(1), false);
                    return;
                }
            }
            if (opcode == Opcodes.INVOKESTATIC && "java/lang/System".equals(target) && "currentTimeMillis".equals(name)) {
                changed[0] = true;
                clockCalls++;
                if (clockCalls == popTimeSite) {
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "popTime", "()J", false);
                } else if (clockCalls == eclipseSite) {
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, STALL, "eclipseNow", "()J", false);
                } else {
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, CLOCK, "currentTimeMillis", "()J", false);
                }
                return;
            }
            if (opcode == Opcodes.INVOKESTATIC && "java/lang/Thread".equals(target) && "sleep".equals(name)
                && "(J)V".equals(desc) && noSleep) {
                changed[0] = true;
                super.visitMethodInsn(Opcodes.INVOKESTATIC, CLOCK, "sleep", "(J)V", false);
                return;
            }
            if (owner.equals(POP) && "unLock".equals(name) && target.endsWith("QueueLockManager")) {
                changed[0] = true;
                super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "beforeUnlock", "()V", false);
            }
            super.visitMethodInsn(opcode, target, name, desc, itf);
        }

        /** In a service loop, the long-polling loop's {@code this.stopped} read (a field, not
         * isStopped()) becomes ServiceLoops#stopped (receiver in, boolean out: same stack). */
        @Override
        public void visitFieldInsn(int opcode, String target, String name, String desc) {
            if (loop && opcode == Opcodes.GETFIELD && "stopped".equals(name) && "Z".equals(desc)) {
                changed[0] = true;
                super.visitMethodInsn(Opcodes.INVOKESTATIC, LOOPS, "stopped", "(Ljava/lang/Object;)Z", false);
                return;
            }
            super.visitFieldInsn(opcode, target, name, desc);
        }

        /** In a service loop: the call's static counterpart (receiver first), or false. */
        private boolean loopCall(int opcode, String target, String name, String desc) {
            if (opcode == Opcodes.INVOKESTATIC) {
                return false;
            }
            boolean mine = ("isStopped".equals(name) && "()Z".equals(desc))
                || ("waitForRunning".equals(name) && "(J)V".equals(desc))
                || ("error".equals(name) && ("(Ljava/lang/String;Ljava/lang/Throwable;)V".equals(desc)
                    || "(Ljava/lang/String;Ljava/lang/Object;Ljava/lang/Object;)V".equals(desc)));
            if (mine) {
                super.visitMethodInsn(Opcodes.INVOKESTATIC, LOOPS, name, "(Ljava/lang/Object;" + desc.substring(1), false);
                return true;
            }
            if (owner.equals(REVIVE) && ("consumeReviveMessage".equals(name) || "mergeAndRevive".equals(name))) {
                super.visitMethodInsn(Opcodes.INVOKESTATIC, ACCESS, name, "(L" + target + ";" + desc.substring(1), false);
                return true;
            }
            return false;
        }
    }
}
