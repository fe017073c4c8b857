-- Every account has all three members' columns, and its payment count matches the payments seed.
select w.id
from {{ ref('account_wide') }} as w
left join (
    select account_id, count(*) as payments from {{ ref('payments') }} group by account_id
) as p on w.id = p.account_id
where w.name is null or w.region is null or w.payment_count is distinct from p.payments
