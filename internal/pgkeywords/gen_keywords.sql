select string_agg(word || ':' || catcode::text || case when barelabel then 'B' else '-' end, ' ' order by word) from pg_get_keywords();
