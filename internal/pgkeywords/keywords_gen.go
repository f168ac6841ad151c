// Code generated from PostgreSQL 15's pg_get_keywords(); DO NOT EDIT.
// Regenerate with gen_keywords.sql against a PostgreSQL 15 server.

package pgkeywords

// keywordList is pg_get_keywords(): each word with its category code
// (U, C, T or R) and whether it can be a bare column label ("B") or not
// ("-").
const keywordList = `
abort:UB absolute:UB access:UB action:UB add:UB admin:UB after:UB aggregate:UB all:RB also:UB
alter:UB always:UB analyse:RB analyze:RB and:RB any:RB array:R- as:R- asc:RB asensitive:UB
assertion:UB assignment:UB asymmetric:RB at:UB atomic:UB attach:UB attribute:UB authorization:TB
backward:UB before:UB begin:UB between:CB bigint:CB binary:TB bit:CB boolean:CB both:RB breadth:UB
by:UB cache:UB call:UB called:UB cascade:UB cascaded:UB case:RB cast:RB catalog:UB chain:UB char:C-
character:C- characteristics:UB check:RB checkpoint:UB class:UB close:UB cluster:UB coalesce:CB
collate:RB collation:TB column:RB columns:UB comment:UB comments:UB commit:UB committed:UB
compression:UB concurrently:TB configuration:UB conflict:UB connection:UB constraint:RB
constraints:UB content:UB continue:UB conversion:UB copy:UB cost:UB create:R- cross:TB csv:UB
cube:UB current:UB current_catalog:RB current_date:RB current_role:RB current_schema:TB
current_time:RB current_timestamp:RB current_user:RB cursor:UB cycle:UB data:UB database:UB day:U-
deallocate:UB dec:CB decimal:CB declare:UB default:RB defaults:UB deferrable:RB deferred:UB
definer:UB delete:UB delimiter:UB delimiters:UB depends:UB depth:UB desc:RB detach:UB dictionary:UB
disable:UB discard:UB distinct:RB do:RB document:UB domain:UB double:UB drop:UB each:UB else:RB
enable:UB encoding:UB encrypted:UB end:RB enum:UB escape:UB event:UB except:R- exclude:UB
excluding:UB exclusive:UB execute:UB exists:CB explain:UB expression:UB extension:UB external:UB
extract:CB false:RB family:UB fetch:R- filter:U- finalize:UB first:UB float:CB following:UB for:R-
force:UB foreign:RB forward:UB freeze:TB from:R- full:TB function:UB functions:UB generated:UB
global:UB grant:R- granted:UB greatest:CB group:R- grouping:CB groups:UB handler:UB having:R-
header:UB hold:UB hour:U- identity:UB if:UB ilike:TB immediate:UB immutable:UB implicit:UB
import:UB in:RB include:UB including:UB increment:UB index:UB indexes:UB inherit:UB inherits:UB
initially:RB inline:UB inner:TB inout:CB input:UB insensitive:UB insert:UB instead:UB int:CB
integer:CB intersect:R- interval:CB into:R- invoker:UB is:TB isnull:T- isolation:UB join:TB key:UB
label:UB language:UB large:UB last:UB lateral:RB leading:RB leakproof:UB least:CB left:TB level:UB
like:TB limit:R- listen:UB load:UB local:UB localtime:RB localtimestamp:RB location:UB lock:UB
locked:UB logged:UB mapping:UB match:UB matched:UB materialized:UB maxvalue:UB merge:UB method:UB
minute:U- minvalue:UB mode:UB month:U- move:UB name:UB names:UB national:CB natural:TB nchar:CB
new:UB next:UB nfc:UB nfd:UB nfkc:UB nfkd:UB no:UB none:CB normalize:CB normalized:UB not:RB
nothing:UB notify:UB notnull:T- nowait:UB null:RB nullif:CB nulls:UB numeric:CB object:UB of:UB
off:UB offset:R- oids:UB old:UB on:R- only:RB operator:UB option:UB options:UB or:RB order:R-
ordinality:UB others:UB out:CB outer:TB over:U- overlaps:T- overlay:CB overriding:UB owned:UB
owner:UB parallel:UB parameter:UB parser:UB partial:UB partition:UB passing:UB password:UB
placing:RB plans:UB policy:UB position:CB preceding:UB precision:C- prepare:UB prepared:UB
preserve:UB primary:RB prior:UB privileges:UB procedural:UB procedure:UB procedures:UB program:UB
publication:UB quote:UB range:UB read:UB real:CB reassign:UB recheck:UB recursive:UB ref:UB
references:RB referencing:UB refresh:UB reindex:UB relative:UB release:UB rename:UB repeatable:UB
replace:UB replica:UB reset:UB restart:UB restrict:UB return:UB returning:R- returns:UB revoke:UB
right:TB role:UB rollback:UB rollup:UB routine:UB routines:UB row:CB rows:UB rule:UB savepoint:UB
schema:UB schemas:UB scroll:UB search:UB second:U- security:UB select:RB sequence:UB sequences:UB
serializable:UB server:UB session:UB session_user:RB set:UB setof:CB sets:UB share:UB show:UB
similar:TB simple:UB skip:UB smallint:CB snapshot:UB some:RB sql:UB stable:UB standalone:UB
start:UB statement:UB statistics:UB stdin:UB stdout:UB storage:UB stored:UB strict:UB strip:UB
subscription:UB substring:CB support:UB symmetric:RB sysid:UB system:UB table:RB tables:UB
tablesample:TB tablespace:UB temp:UB template:UB temporary:UB text:UB then:RB ties:UB time:CB
timestamp:CB to:R- trailing:RB transaction:UB transform:UB treat:CB trigger:UB trim:CB true:RB
truncate:UB trusted:UB type:UB types:UB uescape:UB unbounded:UB uncommitted:UB unencrypted:UB
union:R- unique:RB unknown:UB unlisten:UB unlogged:UB until:UB update:UB user:RB using:RB vacuum:UB
valid:UB validate:UB validator:UB value:UB values:CB varchar:CB variadic:RB varying:U- verbose:TB
version:UB view:UB views:UB volatile:UB when:RB where:R- whitespace:UB window:R- with:R- within:U-
without:U- work:UB wrapper:UB write:UB xml:UB xmlattributes:CB xmlconcat:CB xmlelement:CB
xmlexists:CB xmlforest:CB xmlnamespaces:CB xmlparse:CB xmlpi:CB xmlroot:CB xmlserialize:CB
xmltable:CB year:U- yes:UB zone:UB
`
