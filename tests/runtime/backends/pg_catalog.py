"""Dump a PostgreSQL schema's catalog (tables, columns with types, nullability and
defaults, constraints, indexes) as comparable text items, the schema's own name
replaced by `openprose` so two schemas compare item by item."""

from __future__ import annotations

import re

import psycopg

__all__ = ["Catalog", "catalog"]

Catalog = dict[str, set[str]]


def catalog(db: psycopg.Connection[tuple[object, ...]], schema: str) -> Catalog:
    def norm(text: object) -> str:
        return re.sub(rf"\b{schema}\.", "openprose.", " ".join(str(text).split()))

    tables = {
        str(r[0])
        for r in db.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'",
            (schema,),
        ).fetchall()
    }
    columns = {
        f"{r[0]}.{r[1]} {r[2]}{' NOT NULL' if r[3] else ''}"
        + (f" DEFAULT {norm(r[4])}" if r[4] is not None else "")
        for r in db.execute(
            "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, "
            "pg_get_expr(d.adbin, d.adrelid) FROM pg_attribute a "
            "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
            "WHERE n.nspname = %s AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped",
            (schema,),
        ).fetchall()
    }
    constraints = {
        f"{r[0]}: {norm(r[1])}"
        for r in db.execute(
            "SELECT c.relname, pg_get_constraintdef(k.oid) FROM pg_constraint k "
            "JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s",
            (schema,),
        ).fetchall()
    }
    # the indexes behind a PRIMARY KEY / UNIQUE constraint are listed as constraints
    indexes = {
        norm(r[0])
        for r in db.execute(
            "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND NOT EXISTS "
            "(SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)",
            (schema,),
        ).fetchall()
    }
    return {"tables": tables, "columns": columns, "constraints": constraints, "indexes": indexes}
