with cols as (
  select n.nspname, c.relname, a.attnum, a.attname,
    case format_type(a.atttypid, null)
      when 'oid' then 'o' when 'regtype' then 'o' when 'smallint' then 's' when 'integer' then 'i'
      when 'information_schema.cardinal_number' then 'i' when 'bigint' then 'l' when 'real' then 'f'
      when 'double precision' then 'd' when 'numeric' then 'n' when 'boolean' then 'b' when 'bytea' then 'y'
      when 'timestamp with time zone' then 'z' when 'information_schema.time_stamp' then 'z' when 'interval' then 'v'
      when 'oid[]' then 'o[]' when 'oidvector' then 'o[]' when 'regtype[]' then 'o[]' when 'int2vector' then 's[]'
      when 'smallint[]' then 's[]' when 'real[]' then 'f[]' when 'double precision[]' then 'd[]' when 'boolean[]' then 'b[]'
      when 'text[]' then 't[]' when 'name[]' then 't[]' when 'aclitem[]' then 't[]' when '"char"[]' then 't[]'
      else 't' end as code
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
  where n.nspname in ('pg_catalog', 'information_schema') and c.relkind in ('r', 'v')
)
select format(E'\t{%s, %s, "%s"},', case nspname when 'pg_catalog' then 'pgCatalog' else 'infoSchema' end,
  '"' || relname || '"', string_agg(attname || case code when 't' then '' else ':' || code end, ' ' order by attnum))
from cols group by nspname, relname order by nspname desc, relname;
