"""Tool use, multi-step: look up balances, move money between accounts, freeze a card, and
report a final balance (numeric answer, checked to the cent)."""

import random


class BankRebalanceEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        rng = random.Random(seed)
        kinds = ["checking", "savings", "travel", "bills", "emergency"]
        rng.shuffle(kinds)
        self._state = {"accounts": {}, "cards": {}, "transfers": [], "looked_up": set(),
                       "final_check": False}
        for k, kind in enumerate(kinds[:4]):
            account_id = f"AC-{100 + rng.randint(0, 899)}-{k}"
            self._state["accounts"][account_id] = {
                "kind": kind, "balance": round(rng.uniform(40, 2500), 2)}
        ids = list(self._state["accounts"])
        for account_id in ids:
            self._state["cards"][f"CARD-{account_id[3:6]}{account_id[-1]}"] = {
                "account": account_id, "status": "active"}
        balances = {a: v["balance"] for a, v in self._state["accounts"].items()}
        self.richest = max(ids, key=lambda a: balances[a])
        self.poorest = min(ids, key=lambda a: balances[a])
        self.amount = round(min(balances[self.richest] / 4, 500.0), 2)
        self.lost_card = next(c for c, v in self._state["cards"].items()
                              if v["account"] == self.poorest)
        self.final_balance = round(balances[self.poorest] + self.amount, 2)
        self._tools = {
            "list_accounts": {"description": "List account ids with their kind.",
                              "parameters": {"type": "object", "properties": {}}},
            "get_balance": {"description": "Balance of one account.",
                            "parameters": {"type": "object", "properties": {
                                "account_id": {"type": "string"}}, "required": ["account_id"]}},
            "transfer": {"description": "Move money between two of your accounts.",
                         "parameters": {"type": "object", "properties": {
                             "from_account": {"type": "string"},
                             "to_account": {"type": "string"},
                             "amount": {"type": "number", "minimum": 0.01}},
                             "required": ["from_account", "to_account", "amount"]}},
            "list_cards": {"description": "Cards linked to an account.",
                           "parameters": {"type": "object", "properties": {
                               "account_id": {"type": "string"}}, "required": ["account_id"]}},
            "set_card_status": {"description": "Change a card's status.",
                                "parameters": {"type": "object", "properties": {
                                    "card_id": {"type": "string"},
                                    "status": {"type": "string",
                                               "enum": ["active", "frozen", "cancelled"]}},
                                    "required": ["card_id", "status"]}},
            "exchange_rate": {"description": "Currency exchange rate (not needed for "
                                             "transfers between your own accounts).",
                              "parameters": {"type": "object", "properties": {
                                  "currency": {"type": "string"}}, "required": ["currency"]}},
        }
        self._user_messages = [
            "Check the balances of all my accounts.",
            f"Move {self.amount:.2f} from my account with the most money to the one with "
            "the least.",
            "I lost the card of that low account. Freeze it, don't cancel it.",
            "What is that account's balance now? Answer with the number.",
        ]
        self._message_criteria = [
            lambda s: len(s["looked_up"]) == len(s["accounts"]),
            lambda s: (self.richest, self.poorest, self.amount) in s["transfers"],
            lambda s: s["cards"][self.lost_card]["status"] == "frozen",
            lambda s: s["final_check"],
        ]
        self._current_msg = 0
        self._expected_answer = f"{self.final_balance:.2f}"
        return self._user_messages[0], {}

    def tool_list_accounts(self):
        return "; ".join(f"{a} ({v['kind']})" for a, v in self._state["accounts"].items())

    def tool_get_balance(self, account_id):
        if account_id not in self._state["accounts"]:
            return f"Error: unknown account {account_id}"
        self._state["looked_up"].add(account_id)
        if self._current_msg == 3 and account_id == self.poorest:
            self._state["final_check"] = True
        return f"{self._state['accounts'][account_id]['balance']:.2f}"

    def tool_transfer(self, from_account, to_account, amount):
        accounts = self._state["accounts"]
        if from_account not in accounts or to_account not in accounts:
            return "Error: unknown account"
        if from_account == to_account:
            return "Error: choose two different accounts"
        amount = round(float(amount), 2)
        if accounts[from_account]["balance"] < amount:
            return "Error: insufficient funds"
        accounts[from_account]["balance"] = round(accounts[from_account]["balance"] - amount, 2)
        accounts[to_account]["balance"] = round(accounts[to_account]["balance"] + amount, 2)
        self._state["transfers"].append((from_account, to_account, amount))
        return f"Transferred {amount:.2f} from {from_account} to {to_account}"

    def tool_list_cards(self, account_id):
        cards = [f"{c} ({v['status']})" for c, v in self._state["cards"].items()
                 if v["account"] == account_id]
        return ", ".join(cards) if cards else f"No cards for {account_id}"

    def tool_set_card_status(self, card_id, status):
        if card_id not in self._state["cards"]:
            return f"Error: unknown card {card_id}"
        self._state["cards"][card_id]["status"] = status
        return f"Card {card_id} is now {status}"

    def tool_exchange_rate(self, currency):
        return f"1 USD = {1.0 + (len(currency) % 5) / 10:.2f} {currency.upper()}"

    def solution(self):
        steps = ["list_accounts()"]
        steps += [f"get_balance(account_id='{a}')" for a in self._state["accounts"]]
        steps += [f"transfer(from_account='{self.richest}', to_account='{self.poorest}', "
                  f"amount={self.amount})",
                  f"list_cards(account_id='{self.poorest}')",
                  f"set_card_status(card_id='{self.lost_card}', status='frozen')",
                  f"get_balance(account_id='{self.poorest}')",
                  f"<answer>{self.final_balance:.2f}</answer>"]
        return " ".join(f"{k + 1}. {s}" for k, s in enumerate(steps))
