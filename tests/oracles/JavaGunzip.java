// The independent oracle for kinspect's gzip reader (tests/it/gzip_java.rs): how the JDK's
// java.util.zip.GZIPInputStream, built as Kafka builds it for a gzip batch (8 KiB input buffer
// over the batch's bytes, compress/GzipCompression.java:70) and read to its end as Kafka reads
// it (record/DefaultRecordBatch.java:645-651), takes each input.
//
// Input on stdin: inputs one after another, each a 4-byte big-endian length and that many bytes.
// Output: a line per input, "ok LENGTH CRC32" (the decompressed bytes) or "err EXCEPTION".
// Run: java tests/oracles/JavaGunzip.java < inputs

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import java.util.zip.GZIPInputStream;

public class JavaGunzip {
    /** Reads a ByteBuffer as Kafka's ByteBufferInputStream does: available() is what remains. */
    static final class Remaining extends InputStream {
        private final ByteBuffer b;

        Remaining(ByteBuffer b) {
            this.b = b;
        }

        @Override
        public int read() {
            return b.hasRemaining() ? b.get() & 0xff : -1;
        }

        @Override
        public int read(byte[] into, int off, int len) {
            if (len == 0) {
                return 0;
            }
            if (!b.hasRemaining()) {
                return -1;
            }
            int n = Math.min(len, b.remaining());
            b.get(into, off, n);
            return n;
        }

        @Override
        public int available() {
            return b.remaining();
        }
    }

    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in));
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "UTF-8");
        byte[] chunk = new byte[16 * 1024];
        while (true) {
            int n;
            try {
                n = in.readInt();
            } catch (EOFException end) {
                break;
            }
            byte[] z = new byte[n];
            in.readFully(z);
            try (GZIPInputStream g = new GZIPInputStream(new Remaining(ByteBuffer.wrap(z)), 8 * 1024)) {
                CRC32 crc = new CRC32();
                long total = 0;
                int r;
                while ((r = g.read(chunk)) != -1) {
                    crc.update(chunk, 0, r);
                    total += r;
                }
                out.println("ok " + total + " " + Long.toHexString(crc.getValue()));
            } catch (IOException e) {
                out.println("err " + e.getClass().getSimpleName());
            }
        }
        out.flush();
    }
}
