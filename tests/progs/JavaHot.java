// JavaHot: a Java program hot in one JIT-compiled method for SECONDS.
// Prints "ready PID" first and the result at the end.
public class JavaHot {
    static long work(long x) {
        for (int i = 0; i < 1000; i++)
            x = x * 31 + i;
        return x;
    }

    public static void main(String[] args) {
        double seconds = Double.parseDouble(args[0]);
        System.out.println("ready " + ProcessHandle.current().pid());
        long end = System.nanoTime() + (long) (seconds * 1e9), s = 0;
        while (System.nanoTime() < end)
            s += work(s);
        System.out.println("done " + s);
    }
}
