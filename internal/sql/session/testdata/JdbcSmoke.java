// JdbcSmoke drives Sluice through the PostgreSQL JDBC driver in its
// default mode: extended protocol, server-side prepare after
// prepareThreshold (5) executions, binary transfer for the types the
// driver reads in binary. It prints "ok" and exits 0, or prints what
// went wrong and exits 1. Run by TestJDBC (jdbc_test.go).

import java.math.BigDecimal;
import java.sql.*;
import java.time.*;
import java.util.*;

public class JdbcSmoke {
    static int failures = 0;

    static void check(boolean ok, String what) {
        if (!ok) {
            System.out.println("FAIL: " + what);
            failures++;
        }
    }

    static void eq(Object got, Object want, String what) {
        check(Objects.equals(got, want), what + ": got " + got + ", want " + want);
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/dev";
        Properties props = new Properties();
        props.setProperty("user", "root");
        try (Connection c = DriverManager.getConnection(url, props)) {
            run(c);
        }
        if (failures > 0) {
            System.exit(1);
        }
        System.out.println("ok");
    }

    static final int ROWS = 12;

    static void run(Connection c) throws Exception {
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE jt (id int PRIMARY KEY, big bigint, name varchar, amount numeric, "
                + "flag boolean, day date, at timestamp, atz timestamptz, score double precision)");
            st.execute("CREATE MATERIALIZED VIEW jv AS SELECT id, big, name, amount, flag, day, at, atz, score FROM jt");
        }
        insertRows(c);
        try (Statement st = c.createStatement()) {
            st.execute("FLUSH");
        }
        readBack(c);
        preparedReads(c);
        errors(c);
        metadata(c);
        errors(c);
    }

    static OffsetDateTime atz(int i) {
        return OffsetDateTime.of(2024, 3, 1, 12, i, 30, 0, ZoneOffset.UTC);
    }

    static void insertRows(Connection c) throws SQLException {
        String sql = "INSERT INTO jt (id, big, name, amount, flag, day, at, atz, score) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            // More executions than prepareThreshold, so the driver switches
            // to a named server-side statement part way through.
            for (int i = 1; i <= ROWS; i++) {
                ps.setInt(1, i);
                ps.setLong(2, 10_000_000_000L + i);
                if (i % 4 == 0) {
                    ps.setNull(3, Types.VARCHAR);
                } else {
                    ps.setString(3, "name'" + i);
                }
                ps.setBigDecimal(4, new BigDecimal(i + ".25"));
                ps.setBoolean(5, i % 2 == 0);
                ps.setDate(6, java.sql.Date.valueOf(LocalDate.of(2024, 1, i)));
                ps.setTimestamp(7, Timestamp.valueOf(LocalDateTime.of(2024, 2, 1, 10, i, 0)));
                ps.setObject(8, atz(i));
                ps.setDouble(9, i * 1.5);
                eq(ps.executeUpdate(), 1, "insert row " + i + " count");
            }
        }
    }

    static void readBack(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT id, big, name, amount, flag, day, at, atz, score FROM jv ORDER BY id")) {
            int i = 0;
            while (rs.next()) {
                i++;
                eq(rs.getInt(1), i, "id");
                eq(rs.getLong("big"), 10_000_000_000L + i, "big");
                eq(rs.getString("name"), i % 4 == 0 ? null : "name'" + i, "name");
                check(rs.getBigDecimal("amount").compareTo(new BigDecimal(i + ".25")) == 0, "amount " + rs.getBigDecimal("amount"));
                eq(rs.getBoolean("flag"), i % 2 == 0, "flag");
                eq(rs.getDate("day").toLocalDate(), LocalDate.of(2024, 1, i), "day");
                eq(rs.getTimestamp("at").toLocalDateTime(), LocalDateTime.of(2024, 2, 1, 10, i, 0), "at");
                check(rs.getObject("atz", OffsetDateTime.class).isEqual(atz(i)), "atz " + rs.getObject("atz", OffsetDateTime.class));
                eq(rs.getDouble("score"), i * 1.5, "score");
            }
            eq(i, ROWS, "rows in jv");
        }
    }

    // preparedReads runs a parameterised SELECT past prepareThreshold, so
    // later executions use a named statement and binary results.
    static void preparedReads(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT id, big, score, day, name FROM jv WHERE id = ?")) {
            for (int i = 1; i <= ROWS; i++) {
                ps.setInt(1, i);
                try (ResultSet rs = ps.executeQuery()) {
                    check(rs.next(), "prepared read " + i + " has a row");
                    eq(rs.getInt("id"), i, "prepared id");
                    eq(rs.getLong("big"), 10_000_000_000L + i, "prepared big");
                    eq(rs.getDouble("score"), i * 1.5, "prepared score");
                    eq(rs.getDate("day").toLocalDate(), LocalDate.of(2024, 1, i), "prepared day");
                    check(!rs.next(), "prepared read " + i + " has one row");
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM jv WHERE flag = ? AND amount > ?")) {
            ps.setBoolean(1, true);
            ps.setBigDecimal(2, new BigDecimal("4"));
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next(), "count row");
                eq(rs.getLong(1), (long) (ROWS / 2 - 1), "count of even ids above 4");
            }
        }
    }

    static void errors(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.executeQuery("SELECT * FROM no_such_table");
            check(false, "query on a missing table succeeded");
        } catch (SQLException e) {
            eq(e.getSQLState(), "42P01", "SQLSTATE of a missing table");
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM no_such_table WHERE x = ?")) {
            ps.setInt(1, 1);
            ps.executeQuery();
            check(false, "prepared query on a missing table succeeded");
        } catch (SQLException e) {
            eq(e.getSQLState(), "42P01", "SQLSTATE of a missing table (prepared)");
        }
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM jt")) {
            check(rs.next(), "connection usable after errors");
            eq(rs.getLong(1), (long) ROWS, "count after errors");
        }
    }

    static void metadata(Connection c) throws SQLException {
        DatabaseMetaData md = c.getMetaData();
        check(md.getDatabaseProductVersion() != null, "product version");
        Map<String, String> tables = new TreeMap<>();
        try (ResultSet rs = md.getTables(null, "public", "%", new String[] {"TABLE", "MATERIALIZED VIEW", "VIEW"})) {
            while (rs.next()) {
                tables.put(rs.getString("TABLE_NAME"), rs.getString("TABLE_TYPE"));
                eq(rs.getString("TABLE_SCHEM"), "public", "schema of " + rs.getString("TABLE_NAME"));
            }
        }
        eq(tables.get("jt"), "TABLE", "getTables type of jt (all: " + tables + ")");
        eq(tables.get("jv"), "MATERIALIZED VIEW", "getTables type of jv (all: " + tables + ")");
        tables.clear();
        try (ResultSet rs = md.getTables(null, "public", "j%", null)) {
            while (rs.next()) {
                tables.put(rs.getString("TABLE_NAME"), rs.getString("TABLE_TYPE"));
            }
        }
        // As in Postgres, no types means indexes too: jt's primary key.
        eq(tables.keySet().toString(), "[jt, jt_pkey, jv]", "getTables with no types");

        List<String> cols = new ArrayList<>();
        try (ResultSet rs = md.getColumns(null, "public", "jt", "%")) {
            while (rs.next()) {
                eq(rs.getString("TABLE_NAME"), "jt", "getColumns table");
                cols.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME") + ":" + rs.getInt("DATA_TYPE")
                    + ":" + rs.getInt("ORDINAL_POSITION"));
            }
        }
        eq(String.join(",", cols), String.join(",",
            "id:int4:" + Types.INTEGER + ":1", "big:int8:" + Types.BIGINT + ":2", "name:varchar:" + Types.VARCHAR + ":3",
            "amount:numeric:" + Types.NUMERIC + ":4", "flag:bool:" + Types.BIT + ":5", "day:date:" + Types.DATE + ":6",
            "at:timestamp:" + Types.TIMESTAMP + ":7", "atz:timestamptz:" + Types.TIMESTAMP + ":8",
            "score:float8:" + Types.DOUBLE + ":9"), "getColumns of jt");
        cols.clear();
        try (ResultSet rs = md.getColumns(null, null, "jv", null)) {
            while (rs.next()) {
                cols.add(rs.getString("COLUMN_NAME"));
            }
        }
        eq(String.join(",", cols), "id,big,name,amount,flag,day,at,atz,score", "getColumns of jv");
        List<String> schemas = new ArrayList<>();
        try (ResultSet rs = md.getSchemas()) {
            while (rs.next()) {
                schemas.add(rs.getString("TABLE_SCHEM"));
            }
        }
        check(schemas.contains("public"), "getSchemas lists public: " + schemas);
        List<String> catalogs = new ArrayList<>();
        try (ResultSet rs = md.getCatalogs()) {
            while (rs.next()) {
                catalogs.add(rs.getString("TABLE_CAT"));
            }
        }
        eq(catalogs.toString(), "[dev]", "getCatalogs");
        // What tools ask next; an empty answer is fine, an error is not.
        List<String> pk = new ArrayList<>();
        try (ResultSet rs = md.getPrimaryKeys(null, "public", "jt")) {
            while (rs.next()) {
                pk.add(rs.getString("COLUMN_NAME") + ":" + rs.getInt("KEY_SEQ") + ":" + rs.getString("PK_NAME"));
            }
        }
        eq(String.join(",", pk), "id:1:jt_pkey", "getPrimaryKeys of jt");
        List<String> idx = new ArrayList<>();
        try (ResultSet rs = md.getIndexInfo(null, "public", "jt", true, false)) {
            while (rs.next()) {
                idx.add(rs.getString("INDEX_NAME") + ":" + rs.getString("COLUMN_NAME") + ":" + rs.getBoolean("NON_UNIQUE"));
            }
        }
        eq(String.join(",", idx), "jt_pkey:id:false", "getIndexInfo of jt");
        drain(md.getIndexInfo(null, "public", "jt", false, true));
        drain(md.getImportedKeys(null, "public", "jt"));
        drain(md.getExportedKeys(null, "public", "jt"));
        drain(md.getTableTypes());
        drain(md.getTypeInfo());
        drain(md.getFunctions(null, "public", "%"));
        drain(md.getProcedures(null, "public", "%"));
        drain(md.getUDTs(null, "public", "%", null));
        drain(md.getTablePrivileges(null, "public", "jt"));
        drain(md.getColumnPrivileges(null, "public", "jt", "%"));
        drain(md.getBestRowIdentifier(null, "public", "jt", DatabaseMetaData.bestRowSession, true));
        drain(md.getVersionColumns(null, "public", "jt"));
        check(md.getUserName().equals("root"), "getUserName");
        check(md.getIdentifierQuoteString().equals("\""), "quote string");
    }

    static void drain(ResultSet rs) throws SQLException {
        try (rs) {
            while (rs.next()) {
                rs.getObject(1);
            }
        }
    }
}
