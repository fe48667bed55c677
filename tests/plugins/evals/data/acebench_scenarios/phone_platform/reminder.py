"""Test fixture in the shape of ACEBench's ``ReminderApi`` (made up)."""

from model_inference.multi_turn.scenariosen.phone_platform.base_api import BaseApi


class ReminderApi(BaseApi):
    def __init__(self):
        super().__init__()
        self.reminder_list = {}
        self.reminder_id_counter = 0

    def _load_scenario(self, scenario: dict, long_context=False) -> None:
        self.wifi = scenario.get("wifi", False)
        self.logged_in = scenario.get("logged_in", True)

    def add_reminder(self, title: str, description: str, time: str):
        if not self.logged_in:
            return {"status": False, "message": "Device not logged in"}
        self.reminder_id_counter += 1
        self.reminder_list[self.reminder_id_counter] = {
            "reminder_id": self.reminder_id_counter, "title": title,
            "description": description, "time": time, "notified": False}
        return {"status": True, "message": f"Reminder '{title}' was successfully added."}
